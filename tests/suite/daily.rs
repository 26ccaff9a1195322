//! The engine side of what a daily user of the agent relies on (project instructions, diffs,
//! honest approvals, live bash output, sessions, cost, `@file` mentions, the workbench).

mod approvals;
mod bash_live;
mod cli;
mod cost;
mod day_commands;
mod demo;
mod instructions;
mod mentions;
mod sessions;
mod shell_mode;
mod workbench;
