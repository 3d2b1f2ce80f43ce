//! The real `octopus` binary: started, loaded, killed, restarted.

mod client_commands;
mod durability;
mod fairness;
mod process;
mod slow_clients;
