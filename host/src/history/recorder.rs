//! Recording a suite run as it goes. The runner hands each finished run (its report, its
//! session log and evidence compressed on the run's own blocking thread) and each finished
//! case to the recorder; a writer thread of its own stores them, a transaction per batch of
//! what has arrived. The channel is bounded, so a suite far ahead of a slow store waits
//! rather than holding everything; a store that fails stops being written, and the run goes
//! on: [`Recorder::finish`] says what went wrong, and the run reports and exits as it would
//! without a history.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::StoreError;
use super::location::Location;
use super::store::{RecordedRun, RunEnd, RunLogs, Store, Totals};
use crate::report::{CaseReport, RunReport, SuiteReport};

/// Messages waiting for the writer, at most (each a run's report and its compressed logs).
const QUEUE: usize = 512;
/// Messages stored in one transaction, at most.
const BATCH: usize = 512;

enum Message {
    CaseRun {
        ord: u32,
        report: Box<RunReport>,
        logs: RunLogs,
    },
    Case {
        ord: u32,
        case: Box<CaseReport>,
    },
    Finish(RunEnd),
}

/// Records one suite run into a history store.
pub struct Recorder {
    run_id: String,
    location: String,
    sender: Mutex<Option<SyncSender<Message>>>,
    writer: Mutex<Option<JoinHandle<Result<(), StoreError>>>>,
    /// Each run's compressed session log and evidence, from when its grading thread made
    /// them until its report reaches [`Recorder::run_finished`].
    logs: Mutex<HashMap<(u32, u32), RunLogs>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recorder({} in {})", self.run_id, self.location)
    }
}

impl Recorder {
    /// Open the store at `location` (created and migrated when needed) and record `run` as
    /// running. Opening happens on the writer thread (PostgreSQL's client must not run on
    /// an async worker); this waits for it.
    pub fn start(location: &Location, run: RecordedRun) -> Result<Arc<Self>, StoreError> {
        let (sender, receiver) = sync_channel(QUEUE);
        let (opened_tx, opened_rx) = sync_channel(1);
        let location_for_thread = location.clone();
        let run_id = run.id.clone();
        let writer = std::thread::Builder::new()
            .name("evalhost-history".into())
            .spawn(move || {
                let opened = (|| {
                    let mut store = location_for_thread.open()?;
                    store.write(|s| s.insert_run(&run, "{}"))?;
                    Ok::<_, StoreError>(store)
                })();
                match opened {
                    Ok(store) => {
                        let _ = opened_tx.send(Ok(()));
                        write_all(store, &run.id, receiver)
                    }
                    Err(e) => {
                        let _ = opened_tx.send(Err(e));
                        Ok(())
                    }
                }
            })
            .map_err(|source| StoreError::Io {
                location: location.to_string(),
                source,
            })?;
        let opened = opened_rx.recv().unwrap_or_else(|_| {
            Err(StoreError::Data {
                location: location.to_string(),
                message: "the history writer stopped".into(),
            })
        });
        if let Err(e) = opened {
            let _ = writer.join();
            return Err(e);
        }
        Ok(Arc::new(Self {
            run_id,
            location: location.to_string(),
            sender: Mutex::new(Some(sender)),
            writer: Mutex::new(Some(writer)),
            logs: Mutex::new(HashMap::new()),
        }))
    }

    /// The recorded run's id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Where the store is (a path, or a URL without its password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Run `run` of case `ord` made this session log, evidence and workspace changes (JSON)
    /// (called on its grading thread: they are compressed here, off the writer).
    pub fn run_logs(
        &self,
        ord: u32,
        run: u32,
        session_log: Option<&[u8]>,
        evidence: Option<&[u8]>,
        workspace: Option<&[u8]>,
    ) {
        let logs = RunLogs::compress(session_log, evidence, workspace);
        if let Ok(mut map) = self.logs.lock() {
            map.insert((ord, run), logs);
        }
    }

    /// Run `run` of case `ord` was taken from run `from_run`'s case `from_ord` (`run
    /// --resume`): its files are copied inside the store.
    pub fn reuse_logs(&self, ord: u32, run: u32, from_run: &str, from_ord: u32) {
        let logs = RunLogs {
            copy_from: Some((from_run.to_owned(), from_ord)),
            ..RunLogs::default()
        };
        if let Ok(mut map) = self.logs.lock() {
            map.insert((ord, run), logs);
        }
    }

    /// Run `report.run` of case `ord` is over: stored with the logs [`Recorder::run_logs`]
    /// kept for it.
    pub fn run_finished(&self, ord: u32, report: &RunReport) {
        let logs = self
            .logs
            .lock()
            .ok()
            .and_then(|mut map| map.remove(&(ord, report.run)))
            .unwrap_or_default();
        self.send(Message::CaseRun {
            ord,
            report: Box::new(report.clone()),
            logs,
        });
    }

    /// Case `ord` has every run in.
    pub fn case_finished(&self, ord: u32, case: &CaseReport) {
        self.send(Message::Case {
            ord,
            case: Box::new(case.clone()),
        });
    }

    fn send(&self, message: Message) {
        let sender = self.sender.lock().ok().and_then(|s| s.clone());
        if let Some(sender) = sender {
            // A writer that stopped has its error; `finish` reports it.
            let _ = sender.send(message);
        }
    }

    /// The suite is over: record its status (`interrupted` when Ctrl-C stopped it) and
    /// totals, wait for everything to be stored, and say what went wrong if anything did.
    pub fn finish(&self, report: &SuiteReport) -> Result<(), StoreError> {
        self.send(Message::Finish(RunEnd::of(report)));
        self.close()
    }

    /// Stop the writer after what was sent; its first error.
    fn close(&self) -> Result<(), StoreError> {
        drop(self.sender.lock().ok().and_then(|mut s| s.take()));
        let writer = self.writer.lock().ok().and_then(|mut w| w.take());
        match writer.map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(StoreError::Data {
                location: self.location.clone(),
                message: "the history writer panicked".into(),
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Recorder {
    /// Without [`Recorder::finish`] (an embedder that dropped the suite), what was sent is
    /// still stored; the run stays `running`.
    fn drop(&mut self) {
        let _ = self.close();
    }
}

/// The writer thread: store what arrives, a batch per transaction, until the channel
/// closes; after an error, only drain.
fn write_all(
    mut store: Store,
    run_id: &str,
    receiver: Receiver<Message>,
) -> Result<(), StoreError> {
    let mut totals = Totals::default();
    let mut failed: Option<StoreError> = None;
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        while batch.len() < BATCH {
            match receiver.try_recv() {
                Ok(message) => batch.push(message),
                Err(_) => break,
            }
        }
        if failed.is_some() {
            continue;
        }
        let result = store.write(|store| {
            for message in batch {
                match message {
                    Message::CaseRun { ord, report, logs } => {
                        store.insert_case_run(run_id, ord, &report, logs)?
                    }
                    Message::Case { ord, case } => {
                        totals.add(&case);
                        store.insert_case(run_id, ord, &case)?;
                    }
                    Message::Finish(end) => store.finish_recorded(run_id, &end, &totals)?,
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            failed = Some(e);
        }
    }
    failed.map_or(Ok(()), Err)
}
