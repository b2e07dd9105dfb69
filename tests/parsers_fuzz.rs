//! Property tests: every parser of user input and of Ceph's JSON answers
//! arbitrary, truncated or mistyped input with a value or an error, never a
//! panic.

use cephbench::objects::RunMeta;
use cephbench::result::BenchResult;
use cephbench::telemetry::counters::{delta, parse_perf_dump};
use cephbench::telemetry::parse::{parse_osd_dump_pool, parse_pgs_brief};
use cephbench::units::{parse_duration, parse_size};
use proptest::prelude::*;
use serde_json::Value;

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop_oneof![
            Just("osd".to_string()),
            Just("pg_stats".to_string()),
            Just("pgid".to_string()),
            Just("acting".to_string()),
            Just("1.0".to_string()),
            ".*",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("osd".to_string()),
                    Just("op_w".to_string()),
                    Just("op_w_latency".to_string()),
                    Just("avgcount".to_string()),
                    Just("sum".to_string()),
                    Just("pg_stats".to_string()),
                    Just("pgid".to_string()),
                    Just("acting".to_string()),
                    Just("acting_primary".to_string()),
                    Just("epoch".to_string()),
                    Just("pools".to_string()),
                    Just("pool".to_string()),
                    Just("pg_num".to_string()),
                    "[a-z_]{1,12}",
                ],
                inner,
                0..8
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn size_and_duration_parsers_never_panic(s in ".{0,40}") {
        let _ = parse_size(&s);
        let _ = parse_duration(&s);
    }

    #[test]
    fn sizes_round_trip(n in 0u64..1 << 40, unit in prop::sample::select(vec![("", 0u32), ("K", 10), ("M", 20), ("G", 30)])) {
        if let Some(v) = n.checked_mul(1 << unit.1) {
            prop_assert_eq!(parse_size(&format!("{n}{}", unit.0)), Ok(v));
        }
    }

    #[test]
    fn ceph_json_parsers_never_panic(v in json_value(), pool in -2i64..4, pg_num in 1u32..64, epoch in any::<u64>()) {
        if let (Ok(a), Ok(b)) = (parse_perf_dump(&v), parse_perf_dump(&v)) {
            let d = delta(0, &a, &b);
            prop_assert!(!d.reset);
        }
        if let Ok(p) = parse_pgs_brief(&v, pool, pg_num, epoch) {
            prop_assert_eq!(p.acting.len(), pg_num as usize);
            let _ = p.primary_of("", "x");
        }
        let _ = parse_osd_dump_pool(&v, pool);
    }

    #[test]
    fn truncated_documents_are_errors(cut in 0usize..400) {
        let doc = serde_json::json!({"osd": {"op_w": 5, "op_w_latency": {"avgcount": 5, "sum": 0.5}},
            "pg_stats": [{"pgid": "1.0", "acting": [0], "acting_primary": 0}], "epoch": 3,
            "pools": [{"pool": 1, "pg_num": 8}]}).to_string();
        let cut = cut.min(doc.len());
        let text = &doc[..cut];
        let parsed: Result<Value, _> = serde_json::from_str(text);
        if cut < doc.len() {
            prop_assert!(parsed.is_err());
        }
        prop_assert!(RunMeta::parse(text.as_bytes()).is_err());
        prop_assert!(serde_json::from_str::<BenchResult>(text).is_err());
    }

    #[test]
    fn metadata_and_result_files_never_panic(v in json_value()) {
        let bytes = serde_json::to_vec(&v).unwrap();
        let _ = RunMeta::parse(&bytes);
        let _ = serde_json::from_slice::<BenchResult>(&bytes);
    }
}
