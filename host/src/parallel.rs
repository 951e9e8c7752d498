//! CPU-bound work over many independent items (parsing case files, checking grader configs)
//! spread over the machine's cores, results in the items' order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Below this many items one thread does the work: starting threads would cost more.
const MIN_PARALLEL_ITEMS: usize = 16;

/// `f` of every item, in the items' order, on up to one scoped thread per core. Threads take
/// the next item as they finish one, so a few slow items do not hold up one thread's share.
pub(crate) fn map_in_order<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_in_order_with(items, || (), |(), item| f(item))
}

/// [`map_in_order`] with a state per thread, made by `state` when the thread starts and
/// handed to `f` with each item the thread takes (what the items of one thread may share,
/// such as a grader instance).
pub(crate) fn map_in_order_with<T: Sync, S, R: Send>(
    items: &[T],
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(items.len());
    if threads <= 1 || items.len() < MIN_PARALLEL_ITEMS {
        let mut state = state();
        return items.iter().map(|item| f(&mut state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut state = state();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = f(&mut state, item);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|slot| {
            slot.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .expect("every item was mapped: the scope joined all threads")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::map_in_order;

    #[test]
    fn results_come_back_in_item_order() {
        let items: Vec<u64> = (0..1000).collect();
        let squares = map_in_order(&items, |n| {
            // Uneven work, so threads finish out of order.
            if n % 7 == 0 {
                std::thread::yield_now();
            }
            n * n
        });
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
        assert!(map_in_order(&[] as &[u8], |b| *b).is_empty());
    }

    /// Each thread's state is made once and kept for every item that thread takes: at most
    /// one state per core for 500 items, and states see many items each.
    #[test]
    fn a_state_is_made_per_thread_not_per_item() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let made = AtomicUsize::new(0);
        let items: Vec<u32> = (0..500).collect();
        let seen = super::map_in_order_with(
            &items,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                0u32
            },
            |taken, n| {
                *taken += 1;
                (*n, *taken)
            },
        );
        assert_eq!(seen.iter().map(|(n, _)| *n).collect::<Vec<_>>(), items);
        let states = made.load(Ordering::Relaxed);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!((1..=cores).contains(&states), "{states} states");
        // Each state counted its own items from 1: as many first items as states that took any.
        assert!(seen.iter().filter(|(_, taken)| *taken == 1).count() <= states);
        assert!(seen.iter().any(|(_, taken)| *taken > 1));
    }
}
