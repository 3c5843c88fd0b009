"""bench/common.py's output: a record's compact layout gives back exactly its data, and a
section is written into BENCHMARKS.md only where the file holds its markers (else printed)."""
import json

from bench import common as C


def test_a_record_reads_back_exactly_and_keeps_short_values_on_one_line():
    data = {"benchmark": "x", "rounds": [{"ops": i, "p99_us": [i] * 3} for i in range(40)],
            "long": "y" * 300, "empty": {}, "nested": {"a": {"b": [1.5, None, True, "é"]}}}
    text = C.record_text(data)
    assert json.loads(text) == data
    assert '  {"ops": 3, "p99_us": [3, 3, 3]},\n' in text
    assert all(len(line) <= C.RECORD_WIDTH + 2 for line in text.splitlines() if "yyy" not in line)


def test_a_section_goes_into_benchmarks_md_only_where_its_markers_are(tmp_path, monkeypatch, capsys):
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("# B\n\n<!-- bench:acceptance -->\nold\n<!-- /bench:acceptance -->\n\nend\n")
    monkeypatch.setattr(C, "BENCHMARKS_MD", md)
    monkeypatch.setattr(C, "ROOT", tmp_path)
    C.update_section("acceptance", "new table\n")
    assert md.read_text() == "# B\n\n<!-- bench:acceptance -->\nnew table\n<!-- /bench:acceptance -->\n\nend\n"
    C.update_section("vs_ycsb", "## dbswarm vs go-ycsb\n")
    assert "go-ycsb" not in md.read_text()
    assert capsys.readouterr().out == "## dbswarm vs go-ycsb\n"
