//! `iac-agui` command-line entry point.

fn main() {
    eprintln!("iac-agui: the server is not built yet");
    std::process::exit(2);
}
