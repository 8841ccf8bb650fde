//! `iac-agui-scripted-runtime`: the scripted A2A runtime as a standalone
//! server, for tests, demos and benchmarks. It is not an agent.
//!
//! ```text
//! iac-agui-scripted-runtime [--host 127.0.0.1] [--port 0] [--seed N]
//!                           [--ping-interval-ms N] [--slow-delay-ms N]
//!                           [--subscribe-grace-ms N]
//! ```
//! The bearer token comes from `IACCODE_A2A_HTTP_TOKEN` (as for the real
//! runtime), never from the command line, so it does not show in process
//! lists. The URL is printed on stdout once the socket is bound.

use std::time::Duration;

use iac_agui_scripted_runtime::{serve, Config};

#[tokio::main]
async fn main() {
    if let Err(message) = run().await {
        eprintln!("iac-agui-scripted-runtime: {message}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), String> {
    let mut config = Config {
        token: std::env::var("IACCODE_A2A_HTTP_TOKEN")
            .ok()
            .filter(|t| !t.is_empty()),
        ..Config::default()
    };
    let mut host = "127.0.0.1".to_owned();
    let mut port: u16 = 0;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            println!("{}", usage());
            return Ok(());
        }
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{}", usage()))?;
        let number = || {
            value
                .parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {value}"))
        };
        match flag.as_str() {
            "--host" => host = value.clone(),
            "--port" => {
                port = value
                    .parse()
                    .map_err(|_| format!("--port: not a port: {value}"))?
            }
            "--seed" => config.seed = number()?,
            "--ping-interval-ms" => config.ping_interval = Duration::from_millis(number()?),
            "--slow-delay-ms" => config.slow_delay = Duration::from_millis(number()?),
            "--subscribe-grace-ms" => config.subscribe_grace = Duration::from_millis(number()?),
            _ => return Err(format!("unknown flag {flag}\n{}", usage())),
        }
    }
    let listener = tokio::net::TcpListener::bind((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot bind {host}:{port}: {e}"))?;
    let runtime = serve(listener, config).map_err(|e| e.to_string())?;
    println!(
        "scripted A2A runtime (not an agent) listening on {}",
        runtime.url()
    );
    let _ = tokio::signal::ctrl_c().await;
    runtime.shutdown().await;
    Ok(())
}

fn usage() -> String {
    format!(
        "usage: iac-agui-scripted-runtime [--host H] [--port P] [--seed N] [--ping-interval-ms N] \
         [--slow-delay-ms N] [--subscribe-grace-ms N]\n\
         token: IACCODE_A2A_HTTP_TOKEN; scenarios: {}",
        iac_agui_scripted_runtime::SCENARIO_NAMES.join(", ")
    )
}
