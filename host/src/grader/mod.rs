//! grader
