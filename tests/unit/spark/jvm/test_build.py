"""``kraft.spark.jvm``'s build: a jar that names its sources' digest, found only while current; a
machine without a JDK is told so and, with ``--if-possible``, not failed; a compile error fails."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from kraft.spark import jvm

needs_jdk = pytest.mark.skipif(
    shutil.which("javac") is None, reason="no javac (a JDK 17+ is needed to build the kraft Spark jar)"
)


@needs_jdk
def test_a_built_jar_is_current_until_a_source_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    jar = tmp_path / "kraft-spark.jar"
    monkeypatch.setenv(jvm.JAR_ENV, str(jar))
    assert jvm.jar_path() is None
    assert jvm.main(["build"]) == 0
    assert jvm.jar_path() == jar
    with zipfile.ZipFile(jar) as zf:
        names = set(zf.namelist())
        assert "kraft/spark/KraftSource.class" in names
        assert zf.read("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister").strip() == (
            b"kraft.spark.KraftSource"
        )
        assert zf.read("kraft-schemas.json").decode() == jvm.generated_schemas()
    assert jvm.main(["path"]) == 0
    assert capsys.readouterr().out.strip() == str(jar)
    # A change to the sources (here: the digest they hash to) makes the jar stale.
    monkeypatch.setattr(jvm, "source_digest", lambda: "0" * 16)
    assert jvm.jar_path() is None
    assert jvm.main(["path"]) == 1


def test_no_jdk_is_reported_and_tolerated_with_if_possible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(jvm.JAR_ENV, str(tmp_path / "kraft-spark.jar"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    assert jvm.main(["build"]) == 1
    assert "javac not found" in capsys.readouterr().err
    assert jvm.main(["build", "--if-possible"]) == 0
    assert "the Python source will serve" in capsys.readouterr().err
    assert not (tmp_path / "kraft-spark.jar").exists()


@needs_jdk
def test_a_compile_error_fails_even_with_if_possible(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    java = tmp_path / "java" / "kraft" / "spark"
    java.mkdir(parents=True)
    (java / "Broken.java").write_text("package kraft.spark; class Broken { int x = ; }\n")
    monkeypatch.setattr(jvm, "JAVA_DIR", tmp_path / "java")
    monkeypatch.setenv(jvm.JAR_ENV, str(tmp_path / "kraft-spark.jar"))
    assert jvm.main(["build", "--if-possible"]) == 1
    assert "javac failed" in capsys.readouterr().err
    assert not (tmp_path / "kraft-spark.jar").exists()


def test_usage_errors_exit_2() -> None:
    assert jvm.main([]) == 2
    assert jvm.main(["build", "--fast"]) == 2
    assert jvm.main(["compile"]) == 2
