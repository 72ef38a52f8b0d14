"""Each tenant's policies: the operator's defaults, and the tools the tenant set."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, Protocol

from tooldedup.dedup.errors import InvalidInput
from tooldedup.dedup.policy import PolicySet, ToolPolicy, UnsureAction
from tooldedup.dedup.records import DEFAULT_TENANT, JudgeMode

__all__ = ["PolicyStore", "TenantPolicies"]

logger = logging.getLogger(__name__)
# What every check may cost: a tenant works within the operator's defaults.
_BUDGETS = ("max_candidates", "max_text_leaves", "max_text_chars", "max_comparisons")


class PolicyStore(Protocol):
    """Where policies are kept (the ledger)."""

    def load_policies(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Stored per-tool policy overrides, by tenant, then tool."""
        ...

    def save_policy(self, tenant: str, tool: str, data: dict[str, Any]) -> None:
        """Store one of ``tenant``'s tool policies."""
        ...


class TenantPolicies:
    """The policies in force for every tenant, kept in step with the store.

    The default tenant starts from ``default`` (the ``--policy`` file and what is stored);
    every other tenant from the same defaults, plus the tools it set.
    """

    def __init__(self, store: PolicyStore, default: PolicySet) -> None:
        self._store = store
        self._default = default
        self._others: Mapping[str, PolicySet] = {}
        self._lock = threading.Lock()
        self._stored: dict[str, dict[str, dict[str, Any]]] | None = None

    def of(self, tenant: str) -> PolicySet:
        """``tenant``'s policies in force."""
        if tenant == DEFAULT_TENANT:
            return self._default
        return self._others.get(tenant) or PolicySet(self._default.defaults)

    def every(self) -> dict[str, PolicySet]:
        """Every tenant with policies of its own, the default tenant included."""
        return {DEFAULT_TENANT: self._default, **self._others}

    def set(self, tenant: str, tool: str, policy: ToolPolicy, data: dict[str, object]) -> None:
        """Replace one of ``tenant``'s tool policies and store it.

        A tenant other than the default one may not raise a per-check budget above the
        operator's defaults, nor turn on a judge they leave off: the CPU and the judge are
        shared by every tenant.
        """
        if tenant != DEFAULT_TENANT:
            _within_operator_limits(policy, self._default.defaults)
        with self._lock:
            self._store.save_policy(tenant, tool, data)
            if tenant == DEFAULT_TENANT:
                self._default = self._default.with_tool(tool, policy)
            else:
                updated = self.of(tenant).with_tool(tool, policy)
                self._others = {**self._others, tenant: updated}

    def refresh(self) -> None:
        """Take the stored policies again (another process may have set one)."""
        # Read under the lock: a policy this process sets meanwhile is then either in
        # what is read, or set after it, never overwritten by an older read.
        with self._lock:
            stored = self._store.load_policies()
            if stored == self._stored:
                return
            defaults = self._default.defaults
            built: dict[str, PolicySet] = {}
            for tenant, tools in stored.items():
                try:
                    built[tenant] = PolicySet.build(defaults, tools)
                except InvalidInput as exc:
                    # One tenant's bad row (written by hand, or by a newer release) leaves
                    # that tenant's policies as they were, and no other tenant's.
                    logger.warning("stored policies of %s not taken: %s", tenant, exc.message)
                    built[tenant] = self.of(tenant)
            self._default = built.pop(DEFAULT_TENANT, PolicySet(defaults))
            self._others = built
            self._stored = stored


def _within_operator_limits(policy: ToolPolicy, defaults: ToolPolicy) -> None:
    for name in _BUDGETS:
        if getattr(policy, name) > getattr(defaults, name):
            raise InvalidInput(
                f"{name} may be at most {getattr(defaults, name)}, the service's default"
            )
    if policy.judge_mode not in (JudgeMode.OFF, defaults.judge_mode):
        allowed = "'off'" + (
            f" or {defaults.judge_mode.value!r}, the service's default"
            if defaults.judge_mode is not JudgeMode.OFF
            else ", the service's default"
        )
        raise InvalidInput(f"judge_mode may be {allowed}")
    # The judge and the pair model are shared: a tenant uses them as far as the defaults do.
    judged = defaults.judge_mode is JudgeMode.INLINE or defaults.unsure_action is UnsureAction.JUDGE
    if policy.unsure_action is UnsureAction.JUDGE and not judged:
        raise InvalidInput("unsure_action may be 'judge' only where the service's default judges")
    if policy.pair_model and not defaults.pair_model:
        raise InvalidInput("pair_model may be true only where the service's default is")
