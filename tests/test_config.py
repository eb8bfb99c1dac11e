"""Pins the settings: defaults < .vaultlink/config.yaml < VAULTLINK_* environment."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from vaultlink.cli.settings import (
    DEFAULT_CONFIG_YAML,
    DEFAULTS,
    config_path,
    load_settings,
    model_cache_dir,
)
from vaultlink.errors import ConfigError


def write_config(vault: Path, text: str) -> None:
    path = config_path(vault)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_defaults_parse_and_are_the_commented_file(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={})
    assert settings.source == "defaults"
    assert dict(settings.data) == yaml.safe_load(DEFAULT_CONFIG_YAML) == DEFAULTS
    assert settings.get("llm.model") == "qwen2.5-coder:1.5b"
    assert settings.get("llm.integrate_mode") == "auto"
    assert settings.get("llm.host") == "http://127.0.0.1:11434"
    assert settings.get("folders.digest") == "digest"
    assert settings.get("auto_dream.steps") == [
        "dream_extract_step", "dream_integrate_step", "dream_topics_step", "dream_finish_step"]
    assert settings.get("index.chroma.port") == 8000


def test_the_documented_keys_exist(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={})
    for key in ("folders.daily", "folders.resource", "folders.digest", "llm.provider",
                "llm.host", "llm.model", "llm.num_ctx", "llm.timeout_seconds",
                "embedding.provider", "embedding.model", "index.chroma.mode",
                "index.chroma.host", "index.chroma.port", "auto_dream.steps",
                "auto_dream.max_units", "watch.quiet_seconds", "api.port"):
        settings.get(key)


def test_config_yaml_overrides_defaults_key_by_key(tmp_path: Path) -> None:
    write_config(tmp_path, "llm:\n  model: llama3.2:3b\n  num_ctx: 4096\n")
    settings = load_settings(tmp_path, environ={})
    assert settings.get("llm.model") == "llama3.2:3b"
    assert settings.get("llm.num_ctx") == 4096
    assert settings.get("llm.host") == "http://127.0.0.1:11434"  # untouched sibling
    assert settings.source == str(config_path(tmp_path))


def test_the_file_init_writes_loads_back_as_the_defaults(tmp_path: Path) -> None:
    write_config(tmp_path, DEFAULT_CONFIG_YAML)
    assert dict(load_settings(tmp_path, environ={}).data) == DEFAULTS


def test_env_overrides_config_yaml(tmp_path: Path) -> None:
    write_config(tmp_path, "llm:\n  model: from-file\n")
    settings = load_settings(tmp_path, environ={"VAULTLINK_LLM__MODEL": "from-env",
                                                "VAULTLINK_WATCH__QUIET_SECONDS": "60",
                                                "VAULTLINK_INDEX__CHROMA__PORT": "9000"})
    assert settings.get("llm.model") == "from-env"
    assert settings.get("watch.quiet_seconds") == 60
    assert settings.get("index.chroma.port") == 9000


def test_env_reads_os_environ_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VAULTLINK_LLM__MODEL", "gemma3:1b")
    assert load_settings(tmp_path).get("llm.model") == "gemma3:1b"


def test_env_without_double_underscore_is_not_a_setting(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={"VAULTLINK_VAULT": "/somewhere",
                                                "VAULTLINK_TOKEN": "x"})
    assert dict(settings.data) == DEFAULTS


@pytest.mark.parametrize(
    ("name", "raw"),
    [("VAULTLINK_LLM__MODEL", "yes"), ("VAULTLINK_LLM__MODEL", "1e3"),
     ("VAULTLINK_WATCH__SCHEDULE", "12:30"), ("VAULTLINK_LLM__MODEL", "null")],
)
def test_env_text_settings_stay_text(tmp_path: Path, name: str, raw: str) -> None:
    dotted = name[len("VAULTLINK_"):].lower().replace("__", ".")
    assert load_settings(tmp_path, environ={name: raw}).get(dotted) == raw


def test_unknown_key_in_config_yaml_is_named(tmp_path: Path) -> None:
    write_config(tmp_path, "llm:\n  modle: x\n")
    with pytest.raises(ConfigError, match=r"llm\.modle"):
        load_settings(tmp_path, environ={})


def test_unknown_section_in_config_yaml_is_named(tmp_path: Path) -> None:
    write_config(tmp_path, "lmm:\n  model: x\n")
    with pytest.raises(ConfigError, match="lmm"):
        load_settings(tmp_path, environ={})


def test_unknown_key_in_env_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"VAULTLINK_LLM__MODLE.*llm\.modle"):
        load_settings(tmp_path, environ={"VAULTLINK_LLM__MODLE": "x"})


def test_env_setting_a_whole_section_is_refused_with_its_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'index\.chroma' is a section.*port"):
        load_settings(tmp_path, environ={"VAULTLINK_INDEX__CHROMA": "x"})


def test_env_value_that_does_not_parse_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="VAULTLINK_LLM__NUM_CTX"):
        load_settings(tmp_path, environ={"VAULTLINK_LLM__NUM_CTX": "[unclosed"})


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("llm:\n  num_ctx: big\n", "llm.num_ctx"),
        ("llm:\n  timeout_seconds: true\n", "llm.timeout_seconds"),
        ("llm:\n  silence_seconds: 0\n", "llm.silence_seconds"),
        ("llm:\n  integrate_mode: agent\n", "llm.integrate_mode"),
        ("api:\n  port: -1\n", "api.port"),
        ("llm:\n  model: [a, b]\n", "llm.model"),
        ("llm:\n  model:\n", "llm.model"),
        ("llm:\n  host: 5\n", "llm.host"),
        ("watch:\n  schedule: 12:30\n", "watch.schedule"),
        ("auto_dream:\n  steps: dream_extract_step\n", "auto_dream.steps"),
        ("folders:\n  digest: ../elsewhere\n", "folders.digest"),
        ("llm: fast\n", "llm"),
    ],
)
def test_bad_type_is_a_config_error_naming_the_key(tmp_path: Path, text: str, key: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    assert repr(key) in str(info.value)


def test_bad_type_from_env_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"llm\.num_ctx"):
        load_settings(tmp_path, environ={"VAULTLINK_LLM__NUM_CTX": "big"})


@pytest.mark.parametrize(
    ("text", "key"),
    [("llm:\n  provider: gpt\n", "llm.provider"),
     ("embedding:\n  provider: openai\n", "embedding.provider"),
     ("embedding:\n  sections: quick\n", "embedding.sections"),
     ("index:\n  chroma:\n    mode: cloud\n", "index.chroma.mode")],
)
def test_bad_choice_is_a_config_error_listing_the_choices(
    tmp_path: Path, text: str, key: str
) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, environ={})
    assert repr(key) in str(info.value)
    assert "choose one of" in str(info.value)


@pytest.mark.parametrize("text", ["llm: [\n", "llm:\n  model: 'x\n", "\tllm: x\n"])
def test_broken_yaml_is_a_config_error(tmp_path: Path, text: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError, match="does not parse"):
        load_settings(tmp_path, environ={})


def test_broken_yaml_error_says_where(tmp_path: Path) -> None:
    write_config(tmp_path, "llm:\n  model: qwen3\n  host: [oops\n")
    with pytest.raises(ConfigError, match=r"does not parse at line \d+, column \d+ \("):
        load_settings(tmp_path, environ={})


def test_a_quoted_number_is_told_to_lose_its_quotes(tmp_path: Path) -> None:
    write_config(tmp_path, 'llm:\n  num_ctx: "8192"\n')
    with pytest.raises(ConfigError, match="remove the quotes around it"):
        load_settings(tmp_path, environ={})


def test_config_that_is_not_a_mapping_is_a_config_error(tmp_path: Path) -> None:
    write_config(tmp_path, "- llm\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_settings(tmp_path, environ={})


def test_non_utf8_config_is_a_config_error(tmp_path: Path) -> None:
    config_path(tmp_path).parent.mkdir(parents=True)
    config_path(tmp_path).write_bytes(b"llm:\n  model: caf\xe9\n")
    with pytest.raises(ConfigError):
        load_settings(tmp_path, environ={})


def test_empty_config_and_emptied_sections_keep_the_defaults(tmp_path: Path) -> None:
    write_config(tmp_path, "# everything deleted\n")
    assert dict(load_settings(tmp_path, environ={}).data) == DEFAULTS
    write_config(tmp_path, "llm:\n  # all keys deleted\nwatch:\n")
    assert dict(load_settings(tmp_path, environ={}).data) == DEFAULTS


def test_get_of_an_unknown_key_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope"):
        load_settings(tmp_path, environ={}).get("llm.nope")


def test_with_overrides_replaces_given_keys_and_ignores_none(tmp_path: Path) -> None:
    base = load_settings(tmp_path, environ={})
    new = base.with_overrides({"llm.model": "m", "llm.host": None})
    assert new.get("llm.model") == "m"
    assert new.get("llm.host") == base.get("llm.host")
    assert base.get("llm.model") == "qwen2.5-coder:1.5b"  # the original is unchanged
    with pytest.raises(ConfigError):
        base.with_overrides({"llm.provider": "gpt"})
    with pytest.raises(ConfigError):
        base.with_overrides({"llm.nope": 1})


def test_pipeline_options_carry_every_layer_typed(tmp_path: Path) -> None:
    """compose receives only these: each field from its own setting, typed (distinct
    values everywhere, so two swapped fields cannot pass)."""
    (tmp_path / ".vaultlink").mkdir()
    config_path(tmp_path).write_text("integrate:\n  same_threshold: 0.71\n")
    settings = load_settings(tmp_path, environ={"VAULTLINK_LLM__NUM_CTX": "4096"})
    table = {"provider": ("llm.provider", "ollama"), "llm_host": ("llm.host", "http://h:1"),
             "model": ("llm.model", "m:1b"), "timeout": ("llm.timeout_seconds", 7.5),
             "retries": ("llm.retries", 3), "max_steps": ("llm.max_steps", 9),
             "embedding_provider": ("embedding.provider", "ollama"),
             "embedding_model": ("embedding.model", "e-model"),
             "section_embedding": ("embedding.sections", "same"),
             "chroma_mode": ("index.chroma.mode", "http"),
             "chroma_host": ("index.chroma.host", "c-host"),
             "chroma_port": ("index.chroma.port", 8123), "body_chars": ("index.body_chars", 777),
             "related_threshold": ("integrate.related_threshold", 0.33),
             "digest": ("folders.digest", "memory"), "max_units": ("auto_dream.max_units", 11),
             "max_topics": ("topics.max_topics", 4), "lookback_days": ("topics.lookback_days", 6),
             "fallback": ("llm.fallback", "offline"),
             "backfill_days": ("backfill.days", 21),
             "silence_seconds": ("llm.silence_seconds", 45.0),
             "integrate_mode": ("llm.integrate_mode", "oneshot"),
             "park_after": ("auto_dream.park_after", 5),
             "topic_min_units": ("topics.min_units", 2),
             "review_mode": ("review.mode", "all"),
             "reranker": ("index.reranker", "ms-marco-minilm-l12")}
    options = settings.with_overrides({k: v for k, v in table.values()}).pipeline()
    expected = {field: value for field, (_, value) in table.items()}
    expected |= {"num_ctx": 4096, "same_threshold": 0.71}  # from the env and the file
    expected["model_cache"] = str(model_cache_dir())  # the user's cache, not a setting
    assert dataclasses.asdict(options) == expected


def test_the_daemon_lowers_its_priority_by_default_and_watch_nice_is_checked(
        tmp_path: Path) -> None:
    """watch.nice: 10 unless set; 0 keeps the priority; outside 0..19 is refused, as is
    a topics.min_units below 1."""
    assert load_settings(tmp_path, environ={}).daemon().nice == 10
    assert load_settings(tmp_path, environ={"VAULTLINK_WATCH__NICE": "0"}).daemon().nice == 0
    with pytest.raises(ConfigError, match=r"watch\.nice"):
        load_settings(tmp_path, environ={"VAULTLINK_WATCH__NICE": "25"})
    with pytest.raises(ConfigError, match=r"topics\.min_units"):
        load_settings(tmp_path, environ={"VAULTLINK_TOPICS__MIN_UNITS": "0"})
