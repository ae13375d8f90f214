"""The JVM half of the ``kraft`` Spark source: a DataSource V2 written in Java (``java/``), which
reads a log's files inside Spark's executors with no Python worker in the way.

A Python data source hands every row to the JVM as Arrow over a socket, and that hop alone caps it
at about half of Spark's own Parquet read here (``docs/spark.md``). The Java source decodes the
segments in the executor's JVM straight into Spark's column vectors.

The jar is built from the sources in this directory against the Spark jars that PySpark ships
(no Maven, no download): ``python -m kraft.spark.jvm build`` (``make`` does it). It needs ``javac``
(JDK 17+); where there is none, ``jar_path()`` is None and ``kraft_session`` falls back to the
Python source, saying so once.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
JAVA_DIR = HERE / "java"
RESOURCES_DIR = HERE / "resources"
# Built in place (gitignored); KRAFT_SPARK_JAR overrides where it is looked for and written.
DEFAULT_JAR = HERE / "kraft-spark.jar"
JAR_ENV = "KRAFT_SPARK_JAR"
JAVA_RELEASE = "17"


class BuildError(RuntimeError):
    """The jar could not be built (the sources do not compile, or ``jar`` failed)."""


class MissingToolchain(BuildError):
    """No JDK (``javac``, ``jar``) or no PySpark to compile against."""


def _jar() -> Path:
    return Path(os.environ.get(JAR_ENV) or DEFAULT_JAR)


def sources() -> list[Path]:
    """The Java sources and resources the jar is built from, in a stable order."""
    files = sorted(JAVA_DIR.rglob("*.java")) + sorted(p for p in RESOURCES_DIR.rglob("*") if p.is_file())
    return files


def source_digest() -> str:
    """A digest of the sources (it names the build inside the jar, so a stale jar is seen)."""
    h = hashlib.sha256()
    for path in sources():
        h.update(str(path.relative_to(HERE)).encode())
        h.update(path.read_bytes())
    h.update(generated_schemas().encode())
    return h.hexdigest()[:16]


@functools.cache  # the digest and the build both need it; it is fixed for the process
def generated_schemas() -> str:
    """The record schemas the Java payload decoder interprets (``kraft-schemas.json`` in the jar),
    generated from ``kraft.metadata`` and ``kraft.records.control`` so that they have one source."""
    from kraft.spark.jvm.schemas import schemas_json

    return schemas_json()


def spark_jars_dir() -> Path:
    """The directory of the Spark jars PySpark ships (the compile classpath).

    Raises:
        BuildError: PySpark is not installed.
    """
    try:
        import pyspark
    except ImportError:
        raise MissingToolchain("PySpark is not installed: pip install 'kraft[spark]'") from None
    return Path(pyspark.__file__).resolve().parent / "jars"


def _stamp_of(jar: Path) -> str | None:
    import zipfile

    try:
        with zipfile.ZipFile(jar) as zf:
            return zf.read("kraft-spark.digest").decode().strip()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def jar_path() -> Path | None:
    """The built jar, if it exists and matches the sources; else None."""
    jar = _jar()
    if not jar.is_file():
        return None
    return jar if _stamp_of(jar) == source_digest() else None


def build(out: Path | None = None, *, quiet: bool = False) -> Path:
    """Compile the sources into ``out`` (default: next to them, or ``$KRAFT_SPARK_JAR``).

    Raises:
        BuildError: no ``javac``/``jar`` on PATH or in ``$JAVA_HOME``, no PySpark, or a
            compile error (its output is in the message).
    """
    out = out or _jar()
    javac = _tool("javac")
    jar_tool = _tool("jar")
    classpath = str(spark_jars_dir() / "*")
    with tempfile.TemporaryDirectory(prefix="kraft-jvm-") as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        java_files = [str(p) for p in sorted(JAVA_DIR.rglob("*.java"))]
        cmd = [
            javac,
            "--release",
            JAVA_RELEASE,
            "-encoding",
            "UTF-8",
            "-Xlint:-options",
            "-cp",
            classpath,
            "-d",
            str(classes),
            *java_files,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise BuildError(f"javac failed:\n{done.stdout}{done.stderr}")
        if RESOURCES_DIR.is_dir():
            shutil.copytree(RESOURCES_DIR, classes, dirs_exist_ok=True)
        (classes / "kraft-schemas.json").write_text(generated_schemas(), encoding="utf-8")
        (classes / "kraft-spark.digest").write_text(source_digest() + "\n")
        staged = Path(tmp) / "kraft-spark.jar"
        done = subprocess.run(
            [jar_tool, "--create", "--file", str(staged), "-C", str(classes), "."],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise BuildError(f"jar failed:\n{done.stdout}{done.stderr}")
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staged, out)  # a rename when on the same file system
    if not quiet:
        print(f"built {out}", file=sys.stderr)
    return out


def _tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise MissingToolchain(f"{name} not found (a JDK 17+ is needed to build the kraft Spark jar)")
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m kraft.spark.jvm build [--if-possible] [--force]``: build the jar unless it is
    current; ``python -m kraft.spark.jvm path``: print the current jar's path (for
    ``spark-submit --jars``), or exit 1 if there is none.

    ``--if-possible``: a missing JDK or PySpark is reported and exits 0 (the Python source serves);
    a compile error still fails.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m kraft.spark.jvm build [--if-possible] [--force] | path"
    if args == ["path"]:
        jar = jar_path()
        if jar is None:
            print("no current kraft Spark jar: python -m kraft.spark.jvm build", file=sys.stderr)
            return 1
        print(jar)
        return 0
    if not args or args[0] != "build" or not set(args[1:]) <= {"--if-possible", "--force"}:
        print(usage, file=sys.stderr)
        return 2
    if jar_path() is not None and "--force" not in args:
        return 0
    try:
        build()
    except MissingToolchain as e:
        if "--if-possible" in args:
            print(f"kraft Spark jar not built ({e}); the Python source will serve", file=sys.stderr)
            return 0
        print(str(e), file=sys.stderr)
        return 1
    except BuildError as e:
        print(str(e), file=sys.stderr)
        return 1
    return 0
