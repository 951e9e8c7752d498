//! Where finished runs go: each run's report to its case as it comes, and each case, once
//! its runs are all in, to the suite's [`CaseReports`] (in memory, or past its budget in the
//! spool). So a suite holds the runs of the cases still running, not every case's verdicts.

use std::collections::HashMap;

use super::planned::CaseHeader;
use std::sync::Arc;

use crate::report::{
    CancelledRun, CaseReport, CaseReports, CaseSummary, CostSum, RunDetails, RunReport,
    SuiteSummary,
};

pub(super) struct Finished {
    /// Runs still to come, per case, in plan order.
    remaining: Vec<u32>,
    /// The cases some of whose runs are in: what the report says of each, and its runs.
    running: HashMap<usize, (CaseHeader, Vec<RunReport>)>,
    /// The next case to report: cases are reported in plan order.
    next: usize,
    k: Option<u32>,
    cases: CaseReports,
    runs: u32,
    passed: u32,
    /// The cases' costs, summed.
    cost: CostSum,
    cancelled: Vec<CancelledRun>,
    /// The HTML report's details of each run, told the report's order as cases go to it.
    details: Option<Arc<RunDetails>>,
    /// Told each run and each case as they finish.
    history: Option<Arc<crate::history::Recorder>>,
}

impl Finished {
    /// For cases with these runs planned (each at least one), in plan order.
    pub(super) fn new(
        runs: Vec<u32>,
        k: Option<u32>,
        cases: CaseReports,
        details: Option<Arc<RunDetails>>,
        history: Option<Arc<crate::history::Recorder>>,
    ) -> Self {
        Self {
            remaining: runs,
            running: HashMap::new(),
            next: 0,
            k,
            cases,
            runs: 0,
            passed: 0,
            cost: CostSum::default(),
            cancelled: Vec::new(),
            details,
            history,
        }
    }

    /// Run `result` of case `i`, described by `header`, is in (or was cancelled).
    pub(super) fn add(
        &mut self,
        i: usize,
        header: CaseHeader,
        result: Result<RunReport, CancelledRun>,
    ) {
        // Sized for the case's runs (a list grown from empty makes room for four).
        let runs = self.remaining[i] as usize;
        let (_, reports) = self
            .running
            .entry(i)
            .or_insert_with(|| (header, Vec::with_capacity(runs)));
        match result {
            Ok(report) => {
                if let Some(history) = &self.history {
                    history.run_finished(u32::try_from(i).unwrap_or(u32::MAX), &report);
                }
                reports.push(report)
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
        if let Some((header, runs)) = self.running.remove(&self.next) {
            let summary = CaseSummary::with_k(&runs, self.k);
            self.runs += summary.runs;
            self.passed += summary.passed;
            self.cost.add_case(&summary);
            if let Some(details) = &self.details {
                details.case_reported(self.next, runs.iter().map(|run| run.run));
            }
            let case = CaseReport {
                name: header.name,
                path: header.path,
                confine: header.confine,
                digest: header.digest,
                tags: header.tags,
                summary,
                runs,
            };
            if let Some(history) = &self.history {
                history.case_finished(u32::try_from(self.next).unwrap_or(u32::MAX), &case);
            }
            self.cases.push(case);
        }
        self.next += 1;
    }

    /// Every case reported, the suite's summary, and the runs cancelled (called once every
    /// run is in: each case has its header then).
    pub(super) fn into_parts(mut self) -> (CaseReports, SuiteSummary, Vec<CancelledRun>) {
        while self.next < self.remaining.len() {
            self.report_next();
        }
        let summary = SuiteSummary::new(self.runs, self.passed).with_cost(self.cost);
        (self.cases, summary, self.cancelled)
    }
}
