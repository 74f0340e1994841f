//! `/metrics`: requests by dialect, mode and outcome; violations; repairs; latency; bytes.

use axum::body::Body;
use axum::http::Request;
use mend::Dialect;
use mend_gateway::{app, Gateway, Mode};

use crate::support::{bodies, config_for, request, send, Mock};

#[tokio::test]
async fn metrics_count_what_happened() {
    let mock = Mock::start().await;
    let app = app(Gateway::new(config_for(&mock, Mode::Repair)).unwrap());
    let d = Dialect::OpenAiChat;
    send(&app, request(d, &bodies::unanswered(d), &[])).await;
    send(&app, request(d, &bodies::valid(d), &[])).await;
    let a = Dialect::Anthropic;
    send(
        &app,
        request(a, &bodies::unanswered(a), &[("x-mend-mode", "strict")]),
    )
    .await;
    let r = send(&app, Request::get("/metrics").body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    let text = r.text();
    for line in [
        r#"mend_requests_total{dialect="openai_chat",mode="repair",outcome="repaired"} 1"#,
        r#"mend_requests_total{dialect="openai_chat",mode="repair",outcome="valid"} 1"#,
        r#"mend_requests_total{dialect="anthropic",mode="strict",outcome="rejected"} 1"#,
        r#"mend_violations_total{dialect="openai_chat",rule="tool-call-without-result"} 1"#,
        r#"mend_violations_total{dialect="anthropic",rule="tool-call-without-result"} 1"#,
        r#"mend_repairs_total{dialect="openai_chat",rule="tool-call-without-result"} 1"#,
        r#"mend_upstream_responses_total{dialect="openai_chat",status="200"} 2"#,
        r#"mend_upstream_latency_seconds_count{dialect="openai_chat"} 2"#,
        r#"mend_request_latency_seconds_count{dialect="openai_chat",mode="repair",status="2xx"} 2"#,
        r#"mend_request_latency_seconds_count{dialect="anthropic",mode="strict",status="4xx"} 1"#,
        "# HELP mend_requests_total",
    ] {
        assert!(text.contains(line), "missing {line} in\n{text}");
    }
    assert!(
        text.contains(r#"mend_upstream_latency_seconds_bucket{dialect="openai_chat",le="0.1"}"#)
    );
    let bytes_line = text
        .lines()
        .find(|l| l.starts_with(r#"mend_request_bytes_total{dialect="openai_chat"}"#))
        .expect("request bytes");
    let n: u64 = bytes_line.rsplit(' ').next().unwrap().parse().unwrap();
    let expect = bodies::unanswered(d).to_string().len() + bodies::valid(d).to_string().len();
    assert_eq!(n as usize, expect);
    assert!(text.contains(r#"mend_response_bytes_total{dialect="openai_chat"}"#));
}

#[tokio::test]
async fn every_family_is_shown_before_the_first_request() {
    let app = app(Gateway::new(mend_gateway::Config::default()).unwrap());
    let r = send(&app, Request::get("/metrics").body(Body::empty()).unwrap()).await;
    assert_eq!(r.status, 200);
    let text = r.text();
    for (name, help) in mend_gateway::metrics::NAMES {
        let help_line = format!("# HELP {name} {help}");
        let kind = if name.ends_with("_seconds") {
            "histogram"
        } else {
            "counter"
        };
        let type_line = format!("# TYPE {name} {kind}");
        for line in [help_line, type_line] {
            assert_eq!(
                text.lines().filter(|l| **l == *line).count(),
                1,
                "{line} once in\n{text}"
            );
        }
    }
    // At zero where the label values are known at start-up.
    let mut zero = vec![
        "mend_tap_dropped_total 0".to_string(),
        r#"mend_store_appends_total{outcome="ok"} 0"#.to_string(),
        r#"mend_store_appends_total{outcome="error"} 0"#.to_string(),
    ];
    for d in Dialect::ALL {
        let d = d.name();
        zero.push(format!(r#"mend_request_bytes_total{{dialect="{d}"}} 0"#));
        zero.push(format!(
            r#"mend_upstream_request_bytes_total{{dialect="{d}"}} 0"#
        ));
        zero.push(format!(r#"mend_response_bytes_total{{dialect="{d}"}} 0"#));
        zero.push(format!(
            r#"mend_upstream_latency_seconds_count{{dialect="{d}"}} 0"#
        ));
    }
    for line in &zero {
        assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
    }
    // Every sample line is `name{labels} number`, of a family that was described.
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (series, value) = l.rsplit_once(' ').unwrap();
        assert!(value.parse::<f64>().is_ok(), "{l}");
        let name = series.split('{').next().unwrap();
        assert!(
            mend_gateway::metrics::NAMES.iter().any(|(n, _)| name == *n
                || ["_bucket", "_sum", "_count"]
                    .iter()
                    .any(|s| name.strip_suffix(s) == Some(*n))),
            "{l}: an undescribed series"
        );
    }
}

/// `observe` checks the body while it is forwarded (`proxy::observe_alongside`): for
/// every dialect, whether the upstream answers or cannot be reached, what was found is
/// counted as when the body was judged before sending, and the request under the same
/// outcome.
#[tokio::test]
async fn observe_counts_its_verdict_whether_or_not_the_upstream_answers() {
    let mock = Mock::start().await;
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for reachable in [true, false] {
        let mut config = config_for(&mock, Mode::Observe);
        if !reachable {
            for d in Dialect::ALL {
                config.upstream_mut(d).base_url = format!("http://127.0.0.1:{port}");
            }
        }
        let app = app(Gateway::new(config).unwrap());
        for d in Dialect::ALL {
            let r = send(&app, request(d, &bodies::unanswered(d), &[])).await;
            if reachable {
                assert!(r.header("x-mend-violations").is_some(), "{d}");
            } else {
                assert_eq!(r.status, 502, "{d}");
            }
            send(&app, request(d, &bodies::valid(d), &[])).await;
        }
        let r = send(&app, Request::get("/metrics").body(Body::empty()).unwrap()).await;
        let text = r.text();
        for d in Dialect::ALL {
            let n = d.name();
            let mut lines = vec![format!(
                r#"mend_violations_total{{dialect="{n}",rule="tool-call-without-result"}} 1"#
            )];
            if reachable {
                lines.push(format!(
                    r#"mend_requests_total{{dialect="{n}",mode="observe",outcome="invalid"}} 1"#
                ));
                lines.push(format!(
                    r#"mend_requests_total{{dialect="{n}",mode="observe",outcome="valid"}} 1"#
                ));
            } else {
                lines.push(format!(
                    r#"mend_requests_total{{dialect="{n}",mode="observe",outcome="upstream_unreachable"}} 2"#
                ));
            }
            for line in lines {
                assert!(text.contains(&line), "missing {line} in\n{text}");
            }
        }
    }
}
