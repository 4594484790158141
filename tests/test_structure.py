"""The source tree's structure: no import circles, a variant is a row of one table."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "structure.py"
_spec = importlib.util.spec_from_file_location("novikoff_structure", _SCRIPT)
structure = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = structure
_spec.loader.exec_module(structure)

# The packages kept free of import circles (every import statement counts, function-local ones
# too): all of src/novikoff.
CIRCLE_FREE = ("novikoff",)


def _inside(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in CIRCLE_FREE)


def test_no_import_circle_in_novikoff():
    edges, _ = structure.import_graph()
    assert structure.circles(edges, _inside) == []


def test_the_kernel_imports_nothing_outside_it_but_the_errors():
    """The trusted kernel stands alone: the cross-check, the display of atoms and the search
    for certificates import it, never the other way round."""
    edges, _ = structure.import_graph()
    kernel = {m for m in edges if m.startswith("novikoff.kernel")}
    outside = {(m, d) for m in kernel for d in edges[m]
               if d.startswith("novikoff") and not d.startswith("novikoff.kernel")}
    assert outside <= {(m, "novikoff.errors") for m in kernel}, outside


def test_the_circle_finder_finds_a_circle_through_a_function_local_import(tmp_path):
    """A control: the same graph builder reports a circle that only a local import closes."""
    pkg = tmp_path / "novikoff"
    (pkg / "runtime").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "runtime" / "__init__.py").write_text("")
    (pkg / "runtime" / "_a.py").write_text("from ._b import f\n")
    (pkg / "runtime" / "_b.py").write_text("def f():\n    from ._a import g\n    return g\n")
    (pkg / "runtime" / "_c.py").write_text("from . import _a\n")
    edges, local = structure.import_graph(structure.module_files(tmp_path))
    assert structure.circles(edges, _inside) == [["novikoff.runtime._a",
                                                  "novikoff.runtime._b"]]
    assert [(m, line) for m, line, _ in local] == [("novikoff.runtime._b", 2)]


def test_only_the_table_imports_every_variant_and_nothing_below_imports_the_table():
    edges, _ = structure.import_graph()
    engines = {"novikoff.runtime._averaged_run", "novikoff.runtime._batch_run",
               "novikoff.runtime._dual_run", "novikoff.runtime._voted_run"}
    assert {m for m in edges if engines <= edges[m]} == {"novikoff.runtime._variants"}
    below = {"novikoff.runtime._engine", "novikoff.runtime._monitor", "novikoff.runtime._bounds",
             "novikoff.runtime._compile", "novikoff.runtime._program", "novikoff.runtime._exact",
             "novikoff.runtime._loops", "novikoff.runtime._audit", *engines}
    for module in below & set(structure.module_files()):
        assert not edges[module] & engines - {module}, module
        assert "novikoff.runtime._variants" not in edges[module], module
    assert not edges["novikoff.runtime._engine"] & engines


def test_every_perceptron_of_the_runtime_table_is_fuzzed_and_audited():
    from novikoff.fuzz._variants import VARIANTS as FUZZED
    from novikoff.runtime import VARIANTS
    assert set(VARIANTS) <= set(FUZZED)
    for row in VARIANTS.values():
        assert callable(row.run) and callable(row.audit) and row.trace
        assert row.monitor in ("single", "batch", "voted", "averaged")


@pytest.mark.parametrize("variant", ["kernel", "batch", "averaged"])
def test_an_option_a_variant_does_not_take_is_refused_by_name(variant):
    import numpy as np

    from novikoff.errors import InvalidArgument
    from novikoff.runtime import RunConfig, run
    X = np.array([[1.0, 0.0], [-1.0, 0.1]])
    y = np.array([1.0, -1.0])
    with pytest.raises(InvalidArgument, match=r"chunk_visits=7"):
        run(X, y, RunConfig(variant=variant), chunk_visits=7)
    with pytest.raises(TypeError, match="'max_epoch'"):
        run(X, y, max_epoch=3)


def test_trust_md_states_the_kernel_files_and_their_measured_sizes():
    """docs/trust.md's table of the trusted base is measured (benchmarks/trusted_lines.py
    --write), never typed: every file of the kernel, with its current counts."""
    spec = importlib.util.spec_from_file_location(
        "novikoff_trusted_lines", _SCRIPT.parent / "trusted_lines.py")
    lines = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lines)
    measured = lines.sizes()
    assert len(measured) >= 9 and all(code < total for total, code in measured.values())
    assert lines.documented() == measured
