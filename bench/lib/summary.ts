/** Pieces of the bench summary that are pure (tested in test/bench). */

/** Why a target could not be computed: each named scenario that did not end "ok", by its own name. */
export function notMeasuredReason(
  results: readonly { id: string; status: string; reason?: string }[],
  ids: readonly string[],
): string {
  const why = ids
    .map((id) => {
      const r = results.find((x) => x.id === id);
      if (!r) return `${id} not run`;
      if (r.status === "ok") return null;
      return `${id} ${r.status}${r.reason ? ` (${r.reason})` : ""}`;
    })
    .filter((s) => s !== null)
    .join("; ");
  // every scenario ran: the point the target needs was not among the measured connections
  return why || "the connection count it needs was not measured (--connections)";
}
