//! `iac-agui` command-line entry point.

use std::process::ExitCode;

use clap::Parser as _;
use iac_agui::config::{Cli, Command, Settings};
use iac_agui::loops::EventLoops;

// Per-thread free lists: the relay allocates and frees a few small buffers
// per event, which glibc's malloc made a fifth of the server's CPU
// (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let Cli {
        command: Command::Serve(args),
    } = Cli::parse();
    let settings = match Settings::resolve(&args, |k| std::env::var_os(k)) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("iac-agui: {error}");
            return ExitCode::from(2);
        }
    };
    iac_agui::logging::init(settings.log_format, settings.debug);
    // Before any thread starts: the descriptor table then grows at once,
    // not in steps that stall the first runs (service.rs).
    iac_agui::service::raise_open_file_limit();
    let (runtime, loops) = match EventLoops::start(settings.workers) {
        Ok(started) => started,
        Err(error) => {
            eprintln!("iac-agui: cannot start the event loops: {}", error.kind());
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(iac_agui::service::run(settings, loops)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("iac-agui: {error}");
            ExitCode::FAILURE
        }
    }
}
