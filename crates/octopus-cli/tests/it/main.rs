//! The real `octopus` binary: started, loaded, killed, restarted.

mod durability;
mod process;
