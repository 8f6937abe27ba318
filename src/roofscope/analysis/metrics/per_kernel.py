"""Counter metrics and occupancy of each kernel, keyed by its (normalised) name."""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec

from roofscope.analysis.metrics.machine import Machine, machine_for
from roofscope.analysis.metrics.occupancy import Occupancy, arch_limits, arch_of, theoretical
from roofscope.analysis.metrics.value import ALL, MetricValue
from roofscope.analysis.work.assign import kernel_name_ids, run_name_ids
from roofscope.catalogue.devices import Device
from roofscope.errors import UsageError
from roofscope.model.access import has_counters
from roofscope.model.profile import Profile
from roofscope.model.schema import Role

if TYPE_CHECKING:
    from roofscope.analysis.metrics.achieved import Achieved


class KernelMetrics(msgspec.Struct, frozen=True):
    values: dict[str, MetricValue] = msgspec.field(default_factory=dict)
    occupancy: Occupancy | None = None  # theoretical, from the launch resources
    achieved: Achieved | None = None  # from the wave counters


class MetricsSection(msgspec.Struct, frozen=True):
    machine: Machine
    kernels: dict[str, KernelMetrics]
    whole: dict[str, MetricValue]  # over every dispatch with counters
    problem: str | None  # why occupancy could not be worked out, when it could not


def kernel_metrics(profile: Profile, device: Device | None, kernels: list[str]) -> MetricsSection:
    machine = machine_for(profile, device)
    ids = kernel_name_ids(profile)
    values, run_values = _derived(profile, machine)
    in_runs = run_name_ids(profile, kernels) if run_values else {}
    problem = None
    try:
        theory = theoretical(profile, machine.arch) if machine.arch else {}
        measured = _achieved(profile, machine) if machine.arch else {}
    except UsageError as e:
        theory, measured, problem = {}, {}, str(e)
    out: dict[str, KernelMetrics] = {}
    for kernel in kernels:
        own = ids.get(kernel, [])
        found = next((values[i] for i in own if i in values), None)
        if found is None:
            found = next((run_values[i] for i in in_runs.get(kernel, []) if i in run_values), {})
        occ = next((theory[i] for i in own if i in theory), None)
        got = next((measured[i] for i in own if i in measured), None)
        if found or occ or got:
            out[kernel] = KernelMetrics(found, occ, got)
    whole = values.get(ALL) or run_values.get(ALL) or {}
    return MetricsSection(machine, out, whole, problem)


Values = dict[int, dict[str, MetricValue]]


def _derived(profile: Profile, machine: Machine) -> tuple[Values, Values]:
    """The derived metrics of the trace's dispatches, else of the counter runs'. Their
    formulas, over counter columns, load only for a profile with counters."""
    if not has_counters(profile):
        return {}, {}
    from roofscope.analysis.metrics.derived import metrics

    values = metrics(profile, profile.sources(Role.DISPATCHES), machine)
    run_values = metrics(profile, profile.sources(Role.COUNTER_RUN), machine) if not values else {}
    return values, run_values


def _achieved(profile: Profile, machine: Machine) -> dict[int, Achieved]:
    """Occupancy measured by the wave counters; without counters none, after the same check
    of the architecture (an unknown one is the section's problem either way)."""
    if not has_counters(profile):
        arch_limits(arch_of(profile, machine.arch))
        return {}
    from roofscope.analysis.metrics.achieved import achieved

    return achieved(
        profile, machine.arch, compute_units=machine.compute_units, xcds=machine.num_xcd
    )
