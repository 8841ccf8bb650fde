//! Every error the server answers before the stream starts (SPEC §1, §5,
//! §12), over a real socket: 415, 406, 413, 400, 401 (auth on and off), and
//! the 409s of the admission order.

use iac_agui_tests::agui::{ending, Harness};
use iac_agui_tests::http::Request;
use iac_agui_tests::procs::{RuntimeOptions, ServerOptions};
use serde_json::json;

#[test]
fn transport_errors() {
    let h = Harness::start();
    let body = h.body("transport", "run-1", "scenario:plain");
    let addr = h.addr();

    let health = Request::get("/health").send(addr);
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["protocol"], "ag-ui");

    let cases: Vec<(Request, u16, &str)> = vec![
        (
            h.request(&body).header("Content-Type", "text/plain"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            h.request(&body).without("Content-Type"),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        ),
        (
            h.request(&body).header("Accept", "application/json"),
            406,
            "NOT_ACCEPTABLE",
        ),
        (
            Request {
                body: b"{not json".to_vec(),
                ..h.request(&body)
            },
            400,
            "INVALID_JSON",
        ),
        (
            Request {
                body: vec![0xff, 0xfe, b'{', b'}'],
                ..h.request(&body)
            },
            400,
            "INVALID_JSON",
        ),
        (
            Request {
                body: b"[1,2]".to_vec(),
                ..h.request(&body)
            },
            400,
            "INVALID_INPUT",
        ),
        (h.request(&json!({"threadId": "x"})), 400, "INVALID_INPUT"),
        (
            Request {
                body: vec![b' '; 12 * 1024 * 1024 + 1],
                ..h.request(&body)
            },
            413,
            "REQUEST_TOO_LARGE",
        ),
    ];
    for (request, status, code) in cases {
        let response = request.send(addr);
        assert_eq!(
            (response.status, response.error_code().as_str()),
            (status, code),
            "{}",
            response.text()
        );
    }
    // Content-Type parameters, a wildcard Accept and no Accept are fine.
    for (n, request) in [
        h.request(&h.body("transport", "ok-1", "scenario:plain"))
            .header("Content-Type", "application/json; charset=utf-8"),
        h.request(&h.body("transport", "ok-2", "scenario:plain"))
            .header("Accept", "*/*"),
        h.request(&h.body("transport", "ok-3", "scenario:plain"))
            .without("Accept"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut stream = request.open(addr);
        assert_eq!(stream.status, 200, "variant {n}");
        let text = String::from_utf8(stream.read_to_end()).expect("UTF-8");
        let body = h.body("transport", &format!("ok-{}", n + 1), "scenario:plain");
        assert_eq!(ending(&h.accept(&body, &text)), "RUN_FINISHED:success");
    }
    // A workspace outside the allowed roots.
    let mut outside = h.body("transport-2", "run-1", "hi");
    outside["forwardedProps"]["iacCode"]["cwd"] = json!("/");
    let response = h.post(&outside);
    assert_eq!(
        (response.status, response.error_code().as_str()),
        (400, "INVALID_INPUT")
    );
    h.check_clients();
}

#[test]
fn auth_on() {
    let h = Harness::with(
        RuntimeOptions::default(),
        ServerOptions {
            auth_token: Some("agui-e2e-token".to_owned()),
            ..ServerOptions::default()
        },
    );
    let body = h.body("auth", "run-1", "scenario:plain");
    let addr = h.addr();
    for request in [
        Request::agui("/", &body),
        Request::agui("/", &body).bearer("wrong-token"),
        Request::agui("/", &body).header("Authorization", "Basic agui-e2e-token"),
    ] {
        let response = request.send(addr);
        assert_eq!(
            (response.status, response.error_code().as_str()),
            (401, "UNAUTHORIZED")
        );
        assert!(!response.text().contains("agui-e2e-token"));
    }
    // Auth comes before the body checks.
    let response = Request {
        body: b"{".to_vec(),
        ..Request::agui("/", &body)
    }
    .send(addr);
    assert_eq!(response.status, 401);
    // Health needs none; the right token (any scheme case) runs.
    assert_eq!(Request::get("/health").send(addr).status, 200);
    let received = h.run(&body);
    assert_eq!(ending(&received), "RUN_FINISHED:success");
    let lower = Request::agui("/", &h.body("auth", "run-2", "scenario:plain"))
        .header("Authorization", "bearer agui-e2e-token");
    let mut stream = lower.open(addr);
    assert_eq!(stream.status, 200);
    let text = String::from_utf8(stream.read_to_end()).expect("UTF-8");
    h.accept(&h.body("auth", "run-2", "scenario:plain"), &text);
    let cancel =
        Request::agui("/extensions/iac-code/v1/executions/x/cancel", &json!({})).send(addr);
    assert_eq!(cancel.status, 401);
    assert!(
        !h.server.log().contains("agui-e2e-token"),
        "the token reached the log"
    );
    h.check_clients();
}

#[test]
fn auth_off_accepts_any_authorization() {
    let h = Harness::start();
    let body = h.body("no-auth", "run-1", "scenario:plain");
    let mut stream = h.request(&body).bearer("whatever").open(h.addr());
    assert_eq!(stream.status, 200);
    let text = String::from_utf8(stream.read_to_end()).expect("UTF-8");
    assert_eq!(ending(&h.accept(&body, &text)), "RUN_FINISHED:success");
    h.check_clients();
}

#[test]
fn admission_conflicts() {
    let h = Harness::start();
    let first = h.body("conflicts", "run-1", "scenario:plain");
    assert_eq!(ending(&h.run(&first)), "RUN_FINISHED:success");
    let code = |body: &serde_json::Value| {
        let response = h.post(body);
        (response.status, response.error_code())
    };
    // The same run id: same body, then a different one.
    assert_eq!(code(&first), (409, "DUPLICATE_RUN_ID".to_owned()));
    assert_eq!(
        code(&h.body("conflicts", "run-1", "something else")),
        (409, "RUN_ID_CONFLICT".to_owned())
    );
    // Another workspace (inside the allowed root) on the same thread.
    let mut moved = h.body("conflicts", "run-2", "hi");
    let other = h.server.workspace().join("elsewhere");
    moved["forwardedProps"]["iacCode"]["cwd"] = json!(other.to_str().expect("UTF-8 path"));
    assert_eq!(code(&moved), (409, "THREAD_BINDING_CONFLICT".to_owned()));
    // A resume for a thread the server never saw.
    let lost = h.resume_body(
        "never-seen",
        "run-1",
        json!([{"interruptId": "x", "status": "cancelled"}]),
    );
    assert_eq!(code(&lost), (409, "EXECUTION_LOST".to_owned()));

    // A busy thread: a run that holds until it is cancelled is active.
    let held = h.body("busy", "run-1", "scenario:cancel");
    let mut active = h.open(&held);
    let text = active.read_until(std::time::Duration::from_secs(20), |t| {
        t.contains("iac-code.session.v1")
    });
    assert_eq!(
        code(&h.body("busy", "run-2", "scenario:plain")),
        (409, "THREAD_BUSY".to_owned())
    );
    let session = iac_agui_tests::sse::parse(&text[..text.rfind("\n\n").map_or(0, |i| i + 2)]);
    let execution =
        iac_agui_tests::agui::session(&session).expect("session event")["executionId"].clone();
    let cancel = Request::agui(
        &format!(
            "/extensions/iac-code/v1/executions/{}/cancel",
            execution.as_str().unwrap_or("")
        ),
        &json!({"threadId": "busy", "rosInvocationId": iac_agui_tests::agui::ROS}),
    )
    .send(h.addr());
    assert_eq!(cancel.status, 200, "{}", cancel.text());
    let text = String::from_utf8(active.read_to_end()).expect("UTF-8");
    assert_eq!(ending(&h.accept(&held, &text)), "RUN_ERROR:CANCELLED");

    // Pending interrupt: a new turn needs a resume; a resume under another
    // rosInvocationId is refused.
    let perm = h.run(&h.body("pending", "run-1", "scenario:permission"));
    assert_eq!(ending(&perm), "RUN_FINISHED:interrupt");
    assert_eq!(
        code(&h.body("pending", "run-2", "scenario:plain")),
        (409, "RESUME_REQUIRED".to_owned())
    );
    let id = iac_agui_tests::agui::interrupts(&perm)[0]["id"].clone();
    let mut stranger = h.resume_body(
        "pending",
        "run-3",
        json!([{"interruptId": id, "status": "cancelled"}]),
    );
    stranger["forwardedProps"]["iacCode"]["rosInvocationId"] = json!("someone-else");
    assert_eq!(code(&stranger), (409, "EXECUTION_LOST".to_owned()));
    h.check_clients();
}

#[test]
fn errors_speak_the_callers_language() {
    let h = Harness::start();
    let english = h
        .request(&h.body("lang", "run-1", "hi"))
        .header("Content-Type", "text/plain")
        .send(h.addr());
    let message = |r: &iac_agui_tests::http::Response| {
        r.json()
            .pointer("/error/message")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let english_text = message(&english);
    assert!(!english_text.is_empty());
    let mut seen = std::collections::BTreeSet::from([english_text.clone()]);
    for language in ["zh-CN", "de", "ja;q=0.9, fr;q=0.1"] {
        let translated = h
            .request(&h.body("lang", "run-1", "hi"))
            .header("Content-Type", "text/plain")
            .header("Accept-Language", language)
            .send(h.addr());
        assert_eq!(translated.error_code(), "UNSUPPORTED_MEDIA_TYPE");
        assert!(
            seen.insert(message(&translated)),
            "{language}: {}",
            translated.text()
        );
    }
    // preferredLanguage wins over Accept-Language.
    let mut body = h.body("lang", "run-1", "hi");
    body["forwardedProps"]["iacCode"]["preferredLanguage"] = json!("pt_BR");
    body["forwardedProps"]["iacCode"]["unknownField"] = json!(1);
    let pt = h
        .request(&body)
        .header("Accept-Language", "de")
        .send(h.addr());
    assert_eq!(
        (pt.status, pt.error_code().as_str()),
        (400, "INVALID_INPUT")
    );
    let mut body = h.body("lang", "run-1", "hi");
    body["forwardedProps"]["iacCode"]["unknownField"] = json!(1);
    let de = h
        .request(&body)
        .header("Accept-Language", "de")
        .send(h.addr());
    assert_ne!(message(&pt), message(&de), "pt and de texts");
}

#[test]
fn concurrent_threads_run_independently() {
    let h = Harness::start();
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..6)
            .map(|i| {
                let h = &h;
                scope.spawn(move || {
                    let scenario = [
                        "plain",
                        "think",
                        "tool",
                        "deltas:40",
                        "permission",
                        "slow:200",
                    ][i];
                    let received = h.run(&h.body(
                        &format!("parallel-{i}"),
                        "run-1",
                        &format!("scenario:{scenario}"),
                    ));
                    (scenario, ending(&received))
                })
            })
            .collect();
        for run in runs {
            let (scenario, end) = run.join().expect("run thread");
            let expected = if scenario == "permission" {
                "RUN_FINISHED:interrupt"
            } else {
                "RUN_FINISHED:success"
            };
            assert_eq!(end, expected, "{scenario}");
        }
    });
    h.check_clients();
}
