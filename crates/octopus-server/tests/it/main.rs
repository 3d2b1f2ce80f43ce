//! The HTTP API, in-process (`Router::oneshot`) on a fresh store per test.

mod bad_input;
mod flows;
mod harness;
mod isolation;
mod knowledge;
mod recall;
