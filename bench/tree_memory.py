#!/usr/bin/env python3
"""Samples the memory of a process tree until its root exits (bench/agents.sh).

    tree_memory.py PID [INTERVAL_S]

Every INTERVAL_S (default 0.2) it finds PID's descendants through /proc (an external agent
runs under evalhost as bwrap -> bwrap -> agent, all in evalhost's tree) and sums their
proportional set size (PSS, /proc/N/smaps_rollup: a page shared by k processes counts 1/k in
each, so 16 agents sharing a binary count it once). When PID is gone it prints one line:

    PEAK_TREE_PSS_KB PEAK_TREE_RSS_KB PROCESSES_AT_PEAK EVALHOST_HWM_KB CPU_S

the largest sum seen (a peak shorter than the interval can be missed), the sum of RSS at
the same sample (counts shared pages once per process), how many processes there were, the
last VmHWM seen of the first descendant named `evalhost` (its own peak RSS, or 0), and the
user + system CPU seconds of every process seen, each as last sampled: a lower bound (what a
process used after its last sample, and a process that lived less than an interval, are
missed). Bubblewrap does not hand its children's CPU up to its parent, so getrusage (and
/usr/bin/time) cannot see an agent's.
"""

import os
import sys
import time


def children_by_parent(cpu):
    """Each process's children; records every process's CPU ticks in cpu, by (pid, start)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces: fields start after ')'.
        rest = stat[stat.rfind(b")") + 2 :].split()
        parents.setdefault(int(rest[1]), []).append(int(entry))
        # utime, stime and starttime are fields 14, 15 and 22; rest starts at field 3.
        cpu[(int(entry), rest[19])] = (int(entry), int(rest[11]) + int(rest[12]))
    return parents


def descendants(root, cpu):
    """root and its descendants; the CPU of the tree's processes is kept in cpu."""
    seen = {}
    parents = children_by_parent(seen)
    found, todo = [root], [root]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    tree = set(found)
    cpu.update({key: ticks for key, (pid, ticks) in seen.items() if pid in tree})
    return found


def rollup(pid):
    """(PSS kB, RSS kB) of one process; (0, 0) if it is gone or has no memory (a zombie)."""
    pss = rss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    pss = int(line.split()[1])
                elif line.startswith("Rss:"):
                    rss = int(line.split()[1])
    except OSError:
        pass
    return pss, rss


def hwm_of_evalhost(pids):
    for pid in pids:
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != "evalhost":
                    continue
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1])
        except OSError:
            continue
    return None


def alive(pid):
    """Whether pid runs (a zombie waiting for its parent does not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] != b"Z"


def main():
    root = int(sys.argv[1])
    interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    peak = (0, 0, 0)
    hwm = 0
    cpu = {}
    while alive(root):
        pids = descendants(root, cpu)
        sums = [rollup(pid) for pid in pids]
        pss = sum(s[0] for s in sums)
        if pss > peak[0]:
            peak = (pss, sum(s[1] for s in sums), sum(1 for s in sums if s[1] > 0))
        seen = hwm_of_evalhost(pids)
        if seen is not None:
            hwm = max(hwm, seen)
        time.sleep(interval)
    seconds = sum(cpu.values()) / os.sysconf("SC_CLK_TCK")
    print(peak[0], peak[1], peak[2], hwm, f"{seconds:.2f}")


if __name__ == "__main__":
    main()
