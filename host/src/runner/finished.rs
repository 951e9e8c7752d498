//! Where finished runs go: each run's report to its case as it comes, and each case, once
//! its runs are all in, to the suite's [`CaseReports`] (in memory, or past its budget in the
//! spool). So a suite holds the runs of the cases still running, not every case's verdicts.

use std::collections::HashMap;

use super::planned::CaseHeader;
use crate::report::{CancelledRun, CaseReport, CaseReports, CaseSummary, RunReport, SuiteSummary};

pub(super) struct Finished {
    /// Every case's header, in plan order; taken when the case is reported.
    headers: Vec<CaseHeader>,
    /// Runs still to come, per case.
    remaining: Vec<u32>,
    /// The reports of the cases some of whose runs are in.
    running: HashMap<usize, Vec<RunReport>>,
    /// The next case to report: cases are reported in plan order.
    next: usize,
    k: Option<u32>,
    cases: CaseReports,
    runs: u32,
    passed: u32,
    cancelled: Vec<CancelledRun>,
}

impl Finished {
    /// For cases with these headers and runs planned, in plan order.
    pub(super) fn new(
        headers: Vec<CaseHeader>,
        runs: Vec<u32>,
        k: Option<u32>,
        cases: CaseReports,
    ) -> Self {
        Self {
            remaining: runs,
            headers,
            running: HashMap::new(),
            next: 0,
            k,
            cases,
            runs: 0,
            passed: 0,
            cancelled: Vec::new(),
        }
    }

    /// Run `result` of case `i` is in (or was cancelled).
    pub(super) fn add(&mut self, i: usize, result: Result<RunReport, CancelledRun>) {
        match result {
            // Sized for the case's runs (a list grown from empty makes room for four).
            Ok(report) => {
                let runs = self.remaining[i] as usize;
                self.running
                    .entry(i)
                    .or_insert_with(|| Vec::with_capacity(runs))
                    .push(report);
            }
            Err(run) => self.cancelled.push(run),
        }
        self.remaining[i] = self.remaining[i].saturating_sub(1);
        while self.remaining.get(self.next) == Some(&0) {
            self.report_next();
        }
    }

    /// Report the next case with the runs that came.
    fn report_next(&mut self) {
        let header = std::mem::take(&mut self.headers[self.next]);
        let runs = self.running.remove(&self.next).unwrap_or_default();
        let summary = CaseSummary::with_k(&runs, self.k);
        self.runs += summary.runs;
        self.passed += summary.passed;
        self.cases.push(CaseReport {
            name: header.name().to_owned(),
            path: header.path().to_owned(),
            confine: header.confine.map(|c| (*c).clone()).unwrap_or_default(),
            summary,
            runs,
        });
        self.next += 1;
    }

    /// Every case reported (a case without runs, too), the suite's summary, and the runs
    /// cancelled.
    pub(super) fn into_parts(mut self) -> (CaseReports, SuiteSummary, Vec<CancelledRun>) {
        while self.next < self.headers.len() {
            self.report_next();
        }
        let summary = SuiteSummary::new(self.runs, self.passed);
        (self.cases, summary, self.cancelled)
    }
}
