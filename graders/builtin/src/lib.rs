//! built-in graders
