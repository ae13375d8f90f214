"""The report of ``kraft analyze``: ``OUT/report.html`` (one self-contained page, plots embedded)
and the plots as PNG files in ``OUT/``.

Three steps: ``collect`` reduces the Parquet tables to small summaries with Spark
(``partition_summary``, ``record_counts``, ... are DataFrame -> DataFrame transforms) and brings
them to the driver as pandas frames (``ReportData``); ``write_plots`` draws the PNGs with
matplotlib's Agg canvas (no pyplot state); ``render_html`` writes the page. The last two are plain
functions of ``ReportData``, tested without Spark.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kraft.spark.analyze import (
    ACTIVE,
    CLEAN,
    CLEAR_ELR,
    CONFLICTING,
    CONTROLLED_SHUTDOWN,
    FENCED,
    INDETERMINATE,
    REGISTERED,
    REMOVE_TOPIC,
    UNCLEAN,
    UNFENCED,
    UNREGISTERED,
    Analysis,
    describe_kind,
)

PLOTS = {
    "leadership.png": "Leadership over time",
    "commit_rate.png": "Commit rate and replication lag",
    "brokers.png": "Broker availability",
    "isr_elr.png": "ISR and ELR sizes per partition",
}
MAX_PARTITION_PLOTS = 12  # partitions drawn in isr_elr.png (those with the most changes)
MAX_ROWS = 200  # rows of a table shown in the page (the Parquet tables have them all)
STATE_COLOURS = {
    ACTIVE: "#2ca02c",
    FENCED: "#d62728",
    CONTROLLED_SHUTDOWN: "#ff7f0e",
    UNREGISTERED: "#444444",
}


# -------------------------------------------------------------------------------------------------
# Spark side: summaries of the tables


def partition_summary(changes: Any) -> Any:
    """One row per partition of ``partition_changes``: how often it changed, its leader changes,
    times it became leaderless, unclean elections (a new leader with LeaderRecoveryState
    RECOVERING), replicas that entered an ELR, ClearElr effects, the smallest ISR and largest
    ELR it had, and its last state."""
    from pyspark.sql import functions as F

    alive = F.col("cause") != REMOVE_TOPIC
    return (
        changes.groupBy("topic", "topic_id", "partition")
        .agg(
            F.count(F.lit(1)).alias("changes"),
            F.sum(F.col("leader_changed").cast("int")).alias("leader_changes"),
            F.sum(
                ((F.col("leader") == -1) & (F.coalesce(F.col("previous_leader"), F.lit(0)) != -1)).cast("int")
            ).alias("became_leaderless"),
            F.sum((F.col("leader_changed") & (F.col("leader_recovery_state") == 1)).cast("int")).alias(
                "unclean_elections"
            ),
            F.sum(F.coalesce(F.size("elr_added"), F.lit(0))).alias("elr_entries"),
            F.sum((F.col("cause") == CLEAR_ELR).cast("int")).alias("elr_cleared"),
            F.min(F.when(alive, F.size("isr"))).alias("min_isr"),
            F.max(F.when(alive, F.size("elr"))).alias("max_elr"),
            F.max((~alive).cast("int")).alias("removed"),
            F.max_by(
                F.struct("leader", "leader_epoch", "partition_epoch", "isr", "elr", "last_known_elr"),
                "offset",
            ).alias("last"),
        )
        .select("*", "last.*")
        .drop("last")
    )


def record_counts(records: Any) -> Any:
    """Rows of the history by record type (control records by control type)."""
    from pyspark.sql import functions as F

    return (
        records.where(F.col("in_history"))
        .groupBy(
            F.coalesce(F.col("record_type"), F.col("control_type"), F.lit("(not a metadata record)")).alias(
                "type"
            ),
            "from_snapshot",
        )
        .count()
    )


def top_partitions(changes: Any, n: int) -> Any:
    """The ``partition_changes`` rows of the ``n`` partitions that changed most."""
    from pyspark.sql import functions as F

    top = (
        changes.groupBy("topic_id", "partition")
        .count()
        .orderBy(F.desc("count"), "topic_id", "partition")
        .limit(n)
    )
    return changes.join(F.broadcast(top.drop("count")), ["topic_id", "partition"])


def notable_partition_rows(changes: Any, limit: int) -> Any:
    """Partition changes worth a line in the page: leader lost or regained, unclean elections,
    replicas entering or leaving an ELR, ClearElr, topics removed, changes without a base."""
    from pyspark.sql import functions as F

    return (
        changes.where(
            F.col("leader_changed") & ((F.col("leader") == -1) | (F.col("previous_leader") == -1))
            | (F.col("leader_changed") & (F.col("leader_recovery_state") == 1))
            | (F.size("elr_added") > 0)
            | (F.size("elr_removed") > 0)
            | (F.col("cause") == CLEAR_ELR)
            | (F.col("cause") == REMOVE_TOPIC)
            | F.col("partition_epoch").isNull() & (F.col("cause") != REMOVE_TOPIC)
        )
        .orderBy("offset", "topic", "partition")
        .limit(limit)
    )


@dataclass(slots=True)
class ReportData:
    """The small frames the page and the plots are made of (pandas)."""

    leader_changes: Any
    timeline: Any
    brokers: Any
    partitions: Any
    partition_series: Any
    partition_notable: Any
    record_counts: Any
    first_timestamp: Any = None
    last_timestamp: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


def collect(spark: Any, analysis: Analysis) -> ReportData:
    """The tables of ``analysis`` reduced to ``ReportData`` (Spark jobs, small results)."""
    from pyspark.sql import functions as F

    def table(name: str) -> Any:
        return spark.read.parquet(str(analysis.tables[name]))

    def small(name: str) -> Any:
        """A table the driver reads whole (pyarrow: no Spark job); timestamps as naive UTC."""
        import pyarrow.parquet as pq

        frame = pq.read_table(analysis.tables[name]).to_pandas(maps_as_pydicts="strict")
        for column in frame.columns:
            if str(frame[column].dtype).startswith("datetime64") and frame[column].dt.tz is not None:
                frame[column] = frame[column].dt.tz_convert("UTC").dt.tz_localize(None)
        return frame

    records = table("records")
    history = records.where(F.col("in_history") & ~F.col("from_snapshot"))
    span = history.agg(F.min("timestamp").alias("first"), F.max("timestamp").alias("last")).collect()[0]
    changes = table("partition_changes")
    return ReportData(
        leader_changes=_sorted(small("leader_changes"), ["offset"]),
        timeline=_sorted(small("quorum_timeline"), ["bucket_start"]),
        brokers=_sorted(small("brokers_timeline"), ["offset", "broker"]),
        partitions=_sorted(partition_summary(changes).toPandas(), ["topic", "partition"]),
        partition_series=_sorted(
            top_partitions(changes, MAX_PARTITION_PLOTS).toPandas(), ["topic", "partition", "offset"]
        ),
        partition_notable=notable_partition_rows(changes, MAX_ROWS).toPandas(),
        record_counts=_sorted(record_counts(records).toPandas(), ["count", "type"], [False, True]),
        first_timestamp=span["first"],
        last_timestamp=span["last"],
    )


def _sorted(frame: Any, by: list[str], ascending: list[bool] | None = None) -> Any:
    """A small collected table sorted on the driver (an orderBy would cost Spark a sampling job)."""
    if not len(frame):
        return frame
    return frame.sort_values(by, ascending=ascending or True, kind="stable").reset_index(drop=True)


def write_report(spark: Any, analysis: Analysis) -> Path:
    """``collect``, ``write_plots`` and ``render_html`` into ``analysis.out_dir``; returns the page."""
    data = collect(spark, analysis)
    plots = write_plots(data, analysis.out_dir, analysis.bucket_ms)
    page = analysis.out_dir / "report.html"
    page.write_text(render_html(data, analysis, plots), encoding="utf-8")
    return page


# -------------------------------------------------------------------------------------------------
# Plots


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return path


def _end_time(data: ReportData) -> Any:
    if len(data.timeline):
        return data.timeline["bucket_end"].max()
    return data.last_timestamp


def _mark_leader_changes(ax: Any, data: ReportData) -> None:
    for t in data.leader_changes["timestamp"][1:] if len(data.leader_changes) else ():
        ax.axvline(t, color="#9467bd", linewidth=0.8, linestyle="--", alpha=0.7)


def _dates() -> Any:
    """``matplotlib.dates`` (untyped: kept behind Any)."""
    import importlib

    return importlib.import_module("matplotlib.dates")


def _time_axis(ax: Any) -> None:
    ax.xaxis.set_major_formatter(_dates().DateFormatter("%H:%M:%S"))
    ax.set_xlabel("time (UTC, leader's append time)")
    ax.grid(alpha=0.3)


def plot_leadership(data: ReportData, path: Path) -> Path:
    """The quorum's leader over time (a step per LEADER_CHANGE, labelled with its epoch)."""
    fig = _figure(10, 3.2)
    ax = fig.add_subplot()
    lc = data.leader_changes
    if len(lc):
        times = [*lc["timestamp"], _end_time(data)]
        leaders = [*lc["leader"], lc["leader"].iloc[-1]]
        ax.step(times, leaders, where="post", color="#1f77b4", linewidth=2)
        for t, leader, epoch in zip(lc["timestamp"], lc["leader"], lc["epoch"]):
            ax.plot([t], [leader], "o", color="#1f77b4")
            ax.annotate(f"epoch {epoch}", (t, leader), textcoords="offset points", xytext=(4, 6), fontsize=8)
        gaps = lc[lc["leader_changed"].astype(bool) & lc["previous_record_timestamp"].notna()]
        for i, (start, stop) in enumerate(zip(gaps["previous_record_timestamp"], gaps["timestamp"])):
            ax.axvspan(
                start, stop, color="#d62728", alpha=0.15, label="no appends (failover)" if i == 0 else None
            )
        if len(gaps):
            ax.legend(fontsize=8, loc="lower right")
        ids = sorted({int(v) for v in lc["leader"]} | {int(v) for vs in lc["voters"] for v in vs})
        ax.set_yticks(ids)
        ax.set_ylim(min(ids) - 0.6, max(ids) + 0.6)
    else:
        ax.text(0.5, 0.5, "no LEADER_CHANGE record in the history", ha="center", transform=ax.transAxes)
    ax.set_ylabel("leader (node id)")
    ax.set_title("Leadership over time")
    _time_axis(ax)
    return _save(fig, path)


def plot_commit_rate(data: ReportData, path: Path, bucket_ms: int) -> Path:
    """Records committed per second per bucket and, for a cluster dir, each node's lag."""
    tl = data.timeline
    lags = tl["lag"].dropna() if len(tl) else []
    with_lag = len(lags) > 0 and any(len(m) for m in lags)
    fig = _figure(10, 5.5 if with_lag else 3.2)
    axes = fig.subplots(2 if with_lag else 1, 1, sharex=True, squeeze=False)[:, 0]
    ax = axes[0]
    if len(tl):
        rate = tl["records"] * (1000.0 / bucket_ms)
        width = bucket_ms / 86_400_000  # matplotlib dates are in days
        ax.bar(tl["bucket_start"], rate, width=width, align="edge", color="#1f77b4")
    ax.set_ylabel("records / s")
    ax.set_title(f"Committed records per second ({bucket_ms} ms buckets)")
    _mark_leader_changes(ax, data)
    _time_axis(ax)
    if with_lag:
        ax2 = axes[1]
        series: dict[int, list[tuple[Any, int]]] = {}
        for t, m in zip(tl["bucket_end"], tl["lag"]):
            for node, lag in _pairs(m):
                series.setdefault(int(node), []).append((t, int(lag)))
        for node in sorted(series):
            xs, ys = zip(*series[node])
            ax2.step(xs, ys, where="pre", label=f"node {node}")
        ax2.set_ylabel("lag (records)")
        ax2.set_title("Lag behind the longest log, as the logs show it")
        ax2.legend(fontsize=8, ncol=min(6, len(series)), loc="upper left")
        _mark_leader_changes(ax2, data)
        _time_axis(ax2)
    return _save(fig, path)


def _pairs(m: Any) -> list[tuple[Any, Any]]:
    """A Parquet map as read by pandas (a list of pairs, or a dict)."""
    if m is None:
        return []
    if isinstance(m, dict):
        return list(m.items())
    return [tuple(p) for p in m]


def broker_spans(brokers: Any, end: Any) -> dict[int, list[tuple[Any, Any, str]]]:
    """Per broker, (start, end, state) spans from its events (each state lasts until the next
    event; the last until ``end``)."""
    spans: dict[int, list[tuple[Any, Any, str]]] = {}
    if not len(brokers):
        return spans
    for broker, rows in brokers.sort_values(["offset"], kind="stable").groupby("broker", sort=True):
        times = list(rows["timestamp"])
        states = list(rows["state"])
        out = []
        for i, (t, s) in enumerate(zip(times, states)):
            stop = times[i + 1] if i + 1 < len(times) else end
            if s is not None and stop is not None and stop >= t:
                out.append((t, stop, str(s)))
        spans[int(broker)] = out
    return spans


def plot_brokers(data: ReportData, path: Path) -> Path:
    """One lane per broker, coloured by its state; registrations marked by their class."""
    from matplotlib.patches import Patch

    mdates = _dates()

    spans = broker_spans(data.brokers, _end_time(data))
    fig = _figure(10, 1.4 + 0.5 * max(1, len(spans)))
    ax = fig.add_subplot()
    for lane, broker in enumerate(sorted(spans)):
        for start, stop, state in spans[broker]:
            x0 = mdates.date2num(start)
            ax.broken_barh(
                [(x0, max(mdates.date2num(stop) - x0, 1e-9))],
                (lane - 0.35, 0.7),
                facecolors=STATE_COLOURS.get(state, "#bbbbbb"),
            )
    markers = {
        CLEAN: ("o", "clean re-registration"),
        UNCLEAN: ("X", "unclean re-registration"),
        INDETERMINATE: ("d", "re-registration, indeterminate"),
    }
    lanes = {b: i for i, b in enumerate(sorted(spans))}
    regs = data.brokers[data.brokers["event"] == REGISTERED] if len(data.brokers) else data.brokers
    handles = [Patch(color=c, label=s) for s, c in STATE_COLOURS.items()]
    for kind, (marker, label) in markers.items():
        rows = regs[regs["registration"] == kind] if len(regs) else regs
        if len(rows):
            ax.plot(
                rows["timestamp"],
                [lanes[int(b)] for b in rows["broker"]],
                marker,
                color="black",
                markersize=8,
                linestyle="none",
                label=label,
            )
    ax.set_yticks(range(len(lanes)), [f"broker {b}" for b in sorted(lanes)])
    ax.set_ylim(-0.7, max(0, len(lanes) - 1) + 0.7)
    ax.set_title("Broker availability (state after each lifecycle record)")
    _mark_leader_changes(ax, data)
    _time_axis(ax)
    ax.legend(
        handles=[*handles, *ax.get_legend_handles_labels()[0]],
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
    )
    return _save(fig, path)


def plot_isr_elr(data: ReportData, path: Path) -> Path:
    """|ISR| and |ELR| over time for the partitions that changed most (one panel each)."""
    series = data.partition_series
    keys = (
        list(dict.fromkeys(zip(series["topic"].fillna(series["topic_id"]), series["partition"])))
        if len(series)
        else []
    )
    cols = 3 if len(keys) > 4 else max(1, min(2, len(keys)))
    rows = max(1, math.ceil(len(keys) / cols))
    fig = _figure(10, 0.6 + 2.2 * rows)
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False)
    end = _end_time(data)
    for i, (topic, partition) in enumerate(keys):
        ax = axes[i // cols][i % cols]
        rs = series[
            (series["topic"].fillna(series["topic_id"]) == topic) & (series["partition"] == partition)
        ]
        times = [*rs["timestamp"], end]
        isr = [_size(v) for v in rs["isr"]]
        elr = [_size(v) for v in rs["elr"]]
        ax.step(times, [*isr, isr[-1]], where="post", label="ISR", color="#1f77b4")
        ax.step(times, [*elr, elr[-1]], where="post", label="ELR", color="#ff7f0e")
        leaderless = [t for t, leader in zip(rs["timestamp"], rs["leader"]) if leader == -1]
        if leaderless:
            ax.plot(leaderless, [0] * len(leaderless), "v", color="#d62728", label="leaderless")
        ax.set_title(f"{topic}-{partition}", fontsize=9)
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
        ax.xaxis.set_major_formatter(_dates().DateFormatter("%H:%M:%S"))
        if i == 0:
            ax.legend(fontsize=7)
    for j in range(len(keys), rows * cols):
        axes[j // cols][j % cols].set_visible(len(keys) == 0 and j == 0)
        if not keys:
            axes[0][0].text(
                0.5, 0.5, "no partition in the history", ha="center", transform=axes[0][0].transAxes
            )
    fig.suptitle(f"ISR and ELR sizes (replicas) per partition, the {len(keys)} that changed most")
    return _save(fig, path)


def _size(v: Any) -> int:
    return 0 if v is None else len(v)


def write_plots(data: ReportData, out_dir: Path, bucket_ms: int = 1000) -> list[Path]:
    """The four PNGs of ``PLOTS`` in ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    return [
        plot_leadership(data, out_dir / "leadership.png"),
        plot_commit_rate(data, out_dir / "commit_rate.png", bucket_ms),
        plot_brokers(data, out_dir / "brokers.png"),
        plot_isr_elr(data, out_dir / "isr_elr.png"),
    ]


# -------------------------------------------------------------------------------------------------
# HTML


def _t(value: Any) -> str:
    """A timestamp as ``2026-11-23 19:25:11.251`` (UTC)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    try:
        import pandas as pd

        if pd.isna(value):
            return ""
        return str(pd.Timestamp(value).strftime("%Y-%m-%d %H:%M:%S.%f"))[:-3]
    except (TypeError, ValueError):
        return str(value)


def _v(value: Any) -> str:
    """A cell: lists as ``[1, 2]``, nulls empty, floats holding ints as ints."""
    if value is None:
        return ""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_v(v) for v in value) + "]"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if value.is_integer():
            return str(int(value))
    if isinstance(value, datetime):
        return _t(value)
    return str(value)


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], limit: int = MAX_ROWS) -> str:
    rows = list(rows)
    out = ["<table><thead><tr>", *(f"<th>{html.escape(h)}</th>" for h in headers), "</tr></thead><tbody>"]
    for r in rows[:limit]:
        out.append("<tr>" + "".join(f"<td>{html.escape(_v(c))}</td>" for c in r) + "</tr>")
    out.append("</tbody></table>")
    if len(rows) > limit:
        out.append(f"<p class='note'>{len(rows) - limit} more rows in the Parquet table.</p>")
    return "".join(out)


def _frame_rows(frame: Any, columns: Sequence[str], times: Sequence[str] = ()) -> list[list[Any]]:
    out = []
    for rec in frame[list(columns)].itertuples(index=False):
        out.append([_t(v) if c in times else v for c, v in zip(columns, rec)])
    return out


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    caption = f"{html.escape(alt)} ({html.escape(path.name)})"
    return (
        f"<figure><img alt='{html.escape(alt)}' src='data:image/png;base64,{data}'>"
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _ids(values: Any) -> str:
    return ", ".join(str(int(v)) for v in (values if values is not None else []))


def notable_events(data: ReportData) -> list[tuple[Any, int, str]]:
    """(time, offset, text) of what stands out, in log order: failovers and re-elections, broker
    fencing, controlled shutdowns, re-registrations with their class, partitions losing or
    regaining a leader, unclean elections, ELR changes, ClearElr, removed topics."""
    events: list[tuple[Any, int, str]] = []
    for r in data.leader_changes.itertuples(index=False):
        granted = _ids(r.granting_voters)
        if r.previous_leader is None or _v(r.previous_leader) == "":
            text = f"leader {r.leader} elected in epoch {r.epoch} (votes from {granted})"
        elif bool(r.leader_changed):
            gap = f"; {_v(r.gap_ms)} ms after the previous record" if _v(r.gap_ms) else ""
            text = (
                f"failover: leader {_v(r.previous_leader)} -> {r.leader} in epoch {r.epoch} "
                f"(votes from {granted}{gap})"
            )
        else:
            text = f"leader {r.leader} re-elected in epoch {r.epoch} (votes from {granted})"
        events.append((r.timestamp, int(r.offset), text))
    for r in data.brokers.itertuples(index=False):
        if r.event == REGISTERED:
            if r.registration in (CLEAN, UNCLEAN, INDETERMINATE, CONFLICTING):
                text = (
                    f"broker {r.broker} re-registered ({r.registration}), "
                    f"epoch {r.broker_epoch}: {r.evidence}"
                )
            else:
                text = f"broker {r.broker} registered ({r.registration}), epoch {r.broker_epoch}"
        elif r.event == FENCED:
            text = f"broker {r.broker} fenced"
        elif r.event == UNFENCED:
            text = f"broker {r.broker} unfenced"
        elif r.event == CONTROLLED_SHUTDOWN:
            text = f"broker {r.broker} entered controlled shutdown"
        elif r.event == UNREGISTERED:
            text = f"broker {r.broker} unregistered"
        else:
            continue
        events.append((r.timestamp, int(r.offset), text))
    for r in data.partition_notable.itertuples(index=False):
        name = f"{r.topic if isinstance(r.topic, str) else r.topic_id}-{r.partition}"
        parts = []
        if r.cause == REMOVE_TOPIC:
            parts.append("topic removed")
        elif r.cause == CLEAR_ELR:
            parts.append("ELR and LastKnownElr cleared (ClearElrRecord)")
        else:
            if bool(r.leader_changed) and r.leader == -1:
                parts.append(f"leaderless (was {_v(r.previous_leader)})")
            elif bool(r.leader_changed) and r.previous_leader == -1:
                parts.append(f"leader {r.leader} elected after being leaderless")
            if bool(r.leader_changed) and r.leader_recovery_state == 1:
                parts.append(f"unclean election of {r.leader}")
            if _size(r.elr_added):
                parts.append(f"{_ids(r.elr_added)} entered the ELR")
            if _size(r.elr_removed):
                parts.append(f"{_ids(r.elr_removed)} left the ELR")
            if _v(r.partition_epoch) == "":
                parts.append("change with no known base state")
        if not parts:
            continue
        state = ""
        if r.cause != REMOVE_TOPIC:
            state = (
                f" (ISR [{_ids(r.isr)}], ELR [{_ids(r.elr)}], "
                f"LastKnownElr [{_ids(r.last_known_elr)}], leader {_v(r.leader)})"
            )
        events.append((r.timestamp, int(r.offset), f"{name}: {'; '.join(parts)}{state}"))
    events.sort(key=lambda e: (e[1], e[2]))
    return events


CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
h1{font-size:1.5em}h2{margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f3f3}td{font-family:ui-monospace,monospace}
figure{margin:1em 0}img{max-width:100%}figcaption{font-size:0.8em;color:#666}
.note{color:#666;font-size:0.85em}.unclean{color:#b00}.clean{color:#070}
"""


def render_html(data: ReportData, analysis: Analysis, plots: Sequence[Path]) -> str:
    """The page: overview, notable events, one section per table with its plot, definitions."""
    a = analysis
    h: list[str] = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>kraft analyze: {html.escape(a.source)}</title><style>{CSS}</style></head><body>",
        f"<h1>kraft analyze: {html.escape(a.source)}</h1>",
    ]
    generated = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    span = ""
    if data.first_timestamp is not None and data.last_timestamp is not None:
        seconds = (data.last_timestamp - data.first_timestamp).total_seconds()
        span = f"{_t(data.first_timestamp)} to {_t(data.last_timestamp)} ({seconds:.1f} s)"
    lc = data.leader_changes
    failovers = int(lc["leader_changed"][1:].sum()) if len(lc) > 1 else 0
    regs = data.brokers[data.brokers["event"] == REGISTERED] if len(data.brokers) else data.brokers
    classes = regs["registration"].value_counts().to_dict() if len(regs) else {}
    overview = [
        ("source", a.source),
        ("kind", describe_kind(a)),
        ("history", span),
        ("reference log", f"node {a.reference}" if a.reference is not None else "the quorum's log"),
        ("committed end offset", a.committed_end),
        ("committed", a.committed_by),
        ("leader changes", f"{len(lc)} LEADER_CHANGE records, {failovers} with a new leader"),
        (
            "brokers",
            f"{data.brokers['broker'].nunique() if len(data.brokers) else 0} brokers, "
            + ", ".join(f"{v} {k}" for k, v in sorted(classes.items()))
            + " registrations",
        ),
        ("partitions", f"{len(data.partitions)} partitions"),
        ("table rows", ", ".join(f"{k} {v}" for k, v in a.counts.items())),
        ("generated", f"{generated}, {a.wall_s:.1f} s after the analysis began"),
    ]
    h.append(_table(["", ""], overview))
    for note in a.notes:
        h.append(f"<p class='note'>Note: {html.escape(note)}</p>")

    h.append("<h2>Logs</h2>")
    h.append(
        "<p>One row per node's log. <i>Committed end</i>: 1 + the last offset of this log that a "
        "majority of the voters' logs hold (see Definitions). The history every other table is "
        "built from is the committed prefix of the reference log.</p>"
    )
    ref_end = a.committed_end or 0
    h.append(
        _table(
            [
                "node",
                "role",
                "records",
                "log start",
                "log end",
                "snapshot base",
                "committed end",
                "uncommitted tail",
                "behind the history",
            ],
            [
                [
                    b.node,
                    "voter" if b.voter else ("observer" if b.voter is not None else ""),
                    b.records,
                    b.log_start,
                    b.log_end,
                    b.snapshot_base,
                    b.committed_end,
                    max(0, (b.log_end or 0) - (b.committed_end or 0)) if a.verified else "",
                    max(0, ref_end - (b.log_end or 0)),
                ]
                for b in a.logs
            ],
        )
    )

    h.append("<h2>Notable events</h2>")
    events = notable_events(data)
    h.append(_table(["time", "offset", "event"], [[_t(t), o, text] for t, o, text in events]))

    by_name = {p.name: p for p in plots}

    def plot(name: str) -> None:
        if name in by_name:
            h.append(_img(by_name[name], PLOTS[name]))

    h.append(f"<h2>Leader changes ({len(lc)})</h2>")
    plot("leadership.png")
    h.append(
        _table(
            ["offset", "time", "epoch", "leader", "previous leader", "voters", "granting voters", "gap ms"],
            _frame_rows(
                lc,
                [
                    "offset",
                    "timestamp",
                    "epoch",
                    "leader",
                    "previous_leader",
                    "voters",
                    "granting_voters",
                    "gap_ms",
                ],
                times=["timestamp"],
            ),
        )
    )

    tl = data.timeline
    h.append(f"<h2>Quorum timeline ({len(tl)} buckets of {a.bucket_ms} ms)</h2>")
    plot("commit_rate.png")
    if len(tl):
        rate = tl["records"] * (1000.0 / a.bucket_ms)
        busiest = tl.loc[tl["records"].idxmax()]
        lines = [
            ("records committed", int(tl["records"].sum())),
            ("mean rate", f"{rate.mean():.1f} records/s"),
            ("busiest bucket", f"{_t(busiest['bucket_start'])}: {int(busiest['records'])} records"),
            ("empty buckets", int((tl["records"] == 0).sum())),
        ]
        worst: dict[int, tuple[int, Any]] = {}
        for t, m in zip(tl["bucket_end"], tl["lag"]):
            for node, lag in _pairs(m):
                if int(lag) > worst.get(int(node), (0, None))[0]:
                    worst[int(node)] = (int(lag), t)
        for node in sorted(worst):
            lines.append((f"node {node} max lag", f"{worst[node][0]} records at {_t(worst[node][1])}"))
        h.append(_table(["", ""], lines))

    h.append(f"<h2>Brokers ({len(data.brokers)} lifecycle events)</h2>")
    plot("brokers.png")
    if len(data.brokers):
        summary = []
        for broker, rows in data.brokers.groupby("broker", sort=True):
            ev = rows["event"].value_counts().to_dict()
            rg = rows["registration"].value_counts().to_dict()
            summary.append(
                [
                    broker,
                    ev.get(REGISTERED, 0),
                    rg.get(CLEAN, 0),
                    rg.get(UNCLEAN, 0),
                    rg.get(INDETERMINATE, 0),
                    ev.get(FENCED, 0),
                    ev.get(UNFENCED, 0),
                    ev.get(CONTROLLED_SHUTDOWN, 0),
                    ev.get(UNREGISTERED, 0),
                    rows.sort_values("offset")["state"].iloc[-1],
                ]
            )
        h.append(
            _table(
                [
                    "broker",
                    "registrations",
                    "clean",
                    "unclean",
                    "indeterminate",
                    "fenced",
                    "unfenced",
                    "controlled shutdowns",
                    "unregistered",
                    "last state",
                ],
                summary,
            )
        )
    h.append(
        _table(
            [
                "offset",
                "time",
                "broker",
                "event",
                "state",
                "broker epoch",
                "incarnation",
                "registration",
                "evidence",
            ],
            _frame_rows(
                data.brokers,
                [
                    "offset",
                    "timestamp",
                    "broker",
                    "event",
                    "state",
                    "broker_epoch",
                    "incarnation_id",
                    "registration",
                    "evidence",
                ],
                times=["timestamp"],
            ),
        )
    )

    h.append(f"<h2>Partitions ({len(data.partitions)})</h2>")
    plot("isr_elr.png")
    h.append(
        _table(
            [
                "topic",
                "partition",
                "changes",
                "leader changes",
                "became leaderless",
                "unclean elections",
                "ELR entries",
                "ELR cleared",
                "min ISR",
                "max ELR",
                "removed",
                "leader",
                "leader epoch",
                "partition epoch",
                "ISR",
                "ELR",
                "LastKnownElr",
            ],
            _frame_rows(
                data.partitions,
                [
                    "topic",
                    "partition",
                    "changes",
                    "leader_changes",
                    "became_leaderless",
                    "unclean_elections",
                    "elr_entries",
                    "elr_cleared",
                    "min_isr",
                    "max_elr",
                    "removed",
                    "leader",
                    "leader_epoch",
                    "partition_epoch",
                    "isr",
                    "elr",
                    "last_known_elr",
                ],
            ),
        )
    )

    h.append("<h2>Records in the history</h2>")
    h.append(
        _table(
            ["type", "from snapshot", "count"],
            _frame_rows(data.record_counts, ["type", "from_snapshot", "count"]),
        )
    )

    h.append("<h2>Definitions</h2><ul>")
    for text in DEFINITIONS:
        h.append(f"<li>{html.escape(text)}</li>")
    h.append("</ul>")
    h.append(
        "<p class='note'>Tables (Parquet): "
        + ", ".join(html.escape(f"tables/{name}") for name in a.tables)
        + ". Plots: "
        + ", ".join(html.escape(p.name) for p in plots)
        + ".</p>"
    )
    h.append("</body></html>")
    return "\n".join(h)


DEFINITIONS = (
    "Times are the leader's append times written in the log (UTC), not when a node received a record.",
    "Committed: an entry (offset, epoch) that a majority of the voters' logs hold, below any offset "
    "where some voter holds a higher-epoch entry; an older-epoch entry re-replicated by a leader that "
    "died before committing one of its own epoch would be counted although never committed.",
    "last_offset of a bucket: the last committed record appended by the bucket's end; the high "
    "watermark then was at most last_offset + 1 (a record commits after its append).",
    "Lag: the longest log's end minus this node's log end, both counting records appended by the "
    "bucket's end. A log cannot say when a record arrived, so a node that fell behind and caught up "
    "later shows no lag; one that stopped replicating shows it from then on.",
    "Re-registration classes: unclean when the registration's batch takes the broker out of an ELR "
    "(or, with ELR on, out of an ISR without making it eligible); clean when it moves it from an ISR "
    "into the ELR, leaves it in an ELR, or ELR is off; indeterminate when it was in no ISR or ELR "
    "(both paths then write nothing). It is the controller's judgement of the broker's shutdown.",
    "Broker states: active (registered, unfenced, not shutting down), fenced, controlled_shutdown, "
    "unregistered; a fence after a controlled shutdown is the end of that shutdown.",
)
