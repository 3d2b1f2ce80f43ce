//! Rules the stores run inside their own transactions and reads, written
//! once here so that the stores differ in SQL alone: appends and closes,
//! the memory queue and its fair claims, memory vectors and their rows,
//! full-text queries, copies behind their rows, and forgetting a user.

pub mod appending;
pub mod forget;
pub mod job_turns;
pub mod memory_jobs;
pub mod memory_rows;
pub mod memory_vectors;
pub mod search;
pub mod vector_lag;
