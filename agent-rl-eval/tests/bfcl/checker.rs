//! The checker, decoders and loader on hand-written fixtures (no benchmark data needed).

use std::path::PathBuf;

use agent_rl_eval::EvalError;
use agent_rl_eval::bfcl::{
    BfclDataset, BfclEntry, Category, CheckOptions, Language, check_entry, decode_python_calls,
    decode_text,
};
use serde_json::{Value, json};

pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bfcl/data")
}

pub fn fixture() -> BfclDataset {
    BfclDataset::load(&fixture_dir()).expect("fixture loads")
}

fn entry<'a>(dataset: &'a BfclDataset, id: &str) -> &'a BfclEntry {
    dataset
        .entries()
        .find(|e| e.id == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

/// The error type of checking `output` (decoded calls, or raw text) on entry `id`.
fn verdict(id: &str, output: Value, options: CheckOptions) -> Option<String> {
    let dataset = fixture();
    let entry = entry(&dataset, id);
    let decoded = match &output {
        Value::String(text) => decode_text(text, entry.category.language()),
        other => Ok(other.clone()),
    };
    check_entry(entry, &decoded, options)
        .err()
        .map(|failure| failure.error_type)
}

fn plain(id: &str, output: Value) -> Option<String> {
    verdict(id, output, CheckOptions::default())
}

#[test]
fn loader_reads_the_v4_layout_and_names_the_bad_line() {
    let dataset = fixture();
    assert_eq!(dataset.len(), 9);
    assert_eq!(dataset.categories.len(), 8);
    assert_eq!(
        Category::from_id("live_simple_58-27-0"),
        Some(Category::LiveSimple)
    );
    assert_eq!(Category::from_id("simple_3"), Some(Category::SimplePython));
    assert_eq!(Category::from_id("java_3"), Some(Category::SimpleJava));
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("possible_answer")).expect("mkdir");
    std::fs::write(
        dir.path().join("BFCL_v4_multiple.json"),
        "{\"id\": \"multiple_0\"}\n",
    )
    .expect("write");
    match BfclDataset::load(dir.path()) {
        Err(EvalError::Record { path, line, .. }) => {
            assert!(path.ends_with("BFCL_v4_multiple.json"));
            assert_eq!(line, 1);
        }
        other => panic!("expected a record error, got {other:?}"),
    }
    assert!(matches!(
        BfclDataset::load(&dir.path().join("nowhere")),
        Err(EvalError::Layout { .. })
    ));
}

#[test]
fn python_prompting_format_decodes_like_the_official_decoder() {
    let calls = decode_python_calls(
        "```\n[a.b(x=1, y='s', z=[1, 2.5], w={'k': None}), c(v=-3, u=2*3)]\n```",
    )
    .expect("decodes");
    assert_eq!(
        Value::Array(calls),
        json!([{"a.b": {"x": 1, "y": "s", "z": [1, 2.5], "w": {"k": null}}}, {"c": {"v": -3, "u": 6}}])
    );
    // missing brackets are added, positional arguments dropped, names become strings
    let calls =
        decode_python_calls("f(1, x=True, y=some_var, z=g(q=1), t=(1, 2))").expect("decodes");
    assert_eq!(
        Value::Array(calls),
        json!([{"f": {"x": true, "y": "some_var", "z": {"g": {"q": 1}}, "t": [1, 2]}}])
    );
    assert!(decode_python_calls("I cannot help with that.").is_err());
    assert!(decode_python_calls("[f(x=1]").is_err());
    assert!(decode_python_calls("[f(x=1), 2]").is_err());
}

#[test]
fn tool_call_blocks_and_java_text_decode() {
    let text = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": 1}}\n</tool_call>";
    assert_eq!(
        decode_text(text, Language::Python),
        Ok(json!([{"f": {"x": 1}}]))
    );
    assert!(decode_text("<tool_call>{oops</tool_call>", Language::Python).is_err());
    let java = decode_text(
        "[Cache.resize(cache=userCache, size=64, tags=new ArrayList<>(Arrays.asList(\"a\", \"b\")))]",
        Language::Java,
    );
    assert!(
        decode_text("[f(name=John Doe)]", Language::Java).is_err(),
        "free text"
    );
    assert!(
        decode_text("[f(key=user:1)]", Language::Java).is_err(),
        "stray colon"
    );
    assert!(
        decode_text("[f(obj={a: 1})]", Language::JavaScript).is_ok(),
        "JS object"
    );
    assert_eq!(
        java,
        Ok(
            json!([{"Cache.resize": {"cache": "userCache", "size": "64", "tags": "new ArrayList<>(Arrays.asList(\"a\", \"b\"))"}}])
        )
    );
}

#[test]
fn single_call_rules_and_error_types() {
    let ok = json!([{"walk.duration": {"distance_km": 3, "speed_kmh": 5}}]);
    assert_eq!(plain("simple_python_0", ok), None, "int accepted for float");
    let cases = [
        (
            json!([{"walk.duration": {"distance_km": 3.0, "speed_kmh": 5.0}}]),
            "type_error:simple",
        ),
        (
            json!([{"walk.duration": {"distance_km": 3.0}}]),
            "simple_function_checker:missing_required",
        ),
        (
            json!([{"walk.duration": {"distance_km": 3.0, "speed_kmh": 5, "pace": 1}}]),
            "simple_function_checker:unexpected_param",
        ),
        (
            json!([{"walk_duration": {"distance_km": 3.0, "speed_kmh": 5}}]),
            "simple_function_checker:wrong_func_name",
        ),
        (
            json!([{"walk.duration": {"distance_km": 3.0, "speed_kmh": 6}}]),
            "value_error:others",
        ),
        (
            json!([{"walk.duration": {"distance_km": 3.0, "speed_kmh": 5, "unit": "hours"}}]),
            "value_error:string",
        ),
        (
            json!([{"walk.duration": {"distance_km": 3.0, "speed_kmh": 5, "stops": ["cafe", "park"]}}]),
            "value_error:list/tuple",
        ),
        // the "" marker among the acceptable values passes the nested type check (as upstream)
        (
            json!([{"walk.duration": {"distance_km": 3.0, "speed_kmh": 5, "stops": [1, 2]}}]),
            "value_error:list/tuple",
        ),
        (json!([]), "simple_function_checker:wrong_count"),
        (
            json!({"walk.duration": {}}),
            "ast_decoder:decoder_wrong_output_format",
        ),
        (json!("not a call"), "ast_decoder:decoder_failed"),
    ];
    for (output, expected) in cases {
        assert_eq!(
            plain("simple_python_0", output.clone()).as_deref(),
            Some(expected),
            "{output}"
        );
    }
    let renamed = CheckOptions {
        underscore_to_dot: true,
    };
    let underscored = json!([{"walk_duration": {"distance_km": 3.0, "speed_kmh": 5}}]);
    assert_eq!(verdict("simple_python_0", underscored, renamed), None);
    // string normalisation, Python text, dict values
    let text = json!(
        "[book_table(restaurant='chez anna', date='April 1 2024', guests=2, options={'terrace': True})]"
    );
    assert_eq!(plain("simple_python_1", text), None);
    let dict_key = json!([{"book_table": {"restaurant": "Chez Anna", "date": "2024-04-01", "guests": 2, "options": {"vip": true}}}]);
    assert_eq!(
        plain("simple_python_1", dict_key).as_deref(),
        Some("value_error:dict_key")
    );
    let missing_optional =
        json!([{"book_table": {"restaurant": "Chez Anna", "date": "2024-04-01"}}]);
    assert_eq!(
        plain("simple_python_1", missing_optional).as_deref(),
        Some("simple_function_checker:missing_required")
    );
}

#[test]
fn multiple_and_parallel_rules() {
    assert_eq!(
        plain("multiple_0", json!([{"math.square": {"x": 7}}])),
        None
    );
    assert_eq!(
        plain("multiple_0", json!([{"math.sqrt": {"x": 49}}])).as_deref(),
        Some("simple_function_checker:wrong_func_name")
    );
    let shuffled = json!([{"get_weather": {"city": "rome", "unit": "Celsius"}}, {"get_weather": {"city": "Paris, France"}}]);
    assert_eq!(plain("parallel_0", shuffled), None);
    let one = json!([{"get_weather": {"city": "Rome"}}]);
    assert_eq!(
        plain("parallel_0", one).as_deref(),
        Some("parallel_function_checker_no_order:wrong_count")
    );
    let wrong = json!([{"get_weather": {"city": "Rome"}}, {"get_weather": {"city": "Milan"}}]);
    assert_eq!(
        plain("parallel_0", wrong).as_deref(),
        Some("parallel_function_checker_no_order:cannot_find_match")
    );
}

#[test]
fn java_and_javascript_source_text_rules() {
    let good = json!([{"Cache.resize": {"cache": "userCache", "size": "64", "timeoutMs": "30000L", "tags": "new ArrayList<String>(Arrays.asList(\"a\", \"b\"))"}}]);
    assert_eq!(plain("simple_java_0", good), None);
    let no_suffix =
        json!([{"Cache.resize": {"cache": "userCache", "size": "64", "timeoutMs": "30000"}}]);
    assert_eq!(
        plain("simple_java_0", no_suffix).as_deref(),
        Some("type_error:simple")
    );
    let not_text =
        json!([{"Cache.resize": {"cache": "userCache", "size": 64, "timeoutMs": "30000L"}}]);
    assert_eq!(
        plain("simple_java_0", not_text).as_deref(),
        Some("type_error:java")
    );
    assert_eq!(
        plain(
            "simple_javascript_0",
            json!([{"showElement": {"selector": "'#menu'", "fade": "0.5", "visible": "true"}}])
        ),
        None
    );
    assert_eq!(
        plain(
            "simple_javascript_0",
            json!([{"showElement": {"selector": "#menu", "fade": 0.5}}])
        )
        .as_deref(),
        Some("type_error:js")
    );
}

#[test]
fn relevance_irrelevance_and_multi_turn() {
    assert_eq!(plain("irrelevance_0", json!("Leonardo da Vinci.")), None);
    assert_eq!(plain("irrelevance_0", json!([])), None);
    assert_eq!(plain("irrelevance_0", json!([{}])), None);
    assert_eq!(
        plain("irrelevance_0", json!([{"get_weather": {"city": "Paris"}}])).as_deref(),
        Some("irrelevance_error:decoder_success")
    );
    assert_eq!(
        plain("live_relevance_0-0-0", json!([{"anything": {}}])),
        None
    );
    assert_eq!(
        plain("live_relevance_0-0-0", json!("Sure.")).as_deref(),
        Some("relevance_error:decoder_failed")
    );
    assert_eq!(
        plain("multi_turn_base_0", json!([])).as_deref(),
        Some("multi_turn:unsupported")
    );
}
