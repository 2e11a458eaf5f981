import AzureStorage

/// The absolute date window `[from, to)` that generated dates fall in.
public struct ResolvedWindow: Sendable, Equatable {
    public var from: EdmDateTime
    public var to: EdmDateTime

    public init(from: EdmDateTime, to: EdmDateTime) {
        self.from = from
        self.to = to
    }

    /// Resolves a dataset's window. `--from`/`--to` win; otherwise the dataset's start is
    /// relative to `now` truncated to midnight UTC, and its end is `days` after the start.
    public static func resolve(_ spec: WindowSpec, now: EdmDateTime, from: EdmDateTime?, to: EdmDateTime?) throws(GenerationError) -> ResolvedWindow {
        let today = EdmDateTime(ticks: now.ticks - ((now.ticks % EdmDateTime.ticksPerDay) + EdmDateTime.ticksPerDay) % EdmDateTime.ticksPerDay)
        let start: EdmDateTime
        if let from {
            start = from
        } else {
            switch spec.from {
            case .today(let offset): start = EdmDateTime(ticks: today.ticks + Int64(offset) * EdmDateTime.ticksPerDay)
            case .absolute(let date): start = date
            }
        }
        let end: EdmDateTime
        if let to {
            end = to
        } else if let specTo = spec.to {
            end = specTo
        } else {
            end = EdmDateTime(ticks: start.ticks + Int64(spec.days ?? 1) * EdmDateTime.ticksPerDay)
        }
        guard start.isInAzureRange, end.ticks <= EdmDateTime.endOfRange.ticks, end.ticks > EdmDateTime.minimum.ticks else {
            throw GenerationError(
                usage: true,
                "the window \(start.shortISO8601) to \(end.shortISO8601) is outside Edm.DateTime's range (1601-01-01 to 9999-12-31); check \(Setting.referenceTime), \(Setting.windowStart) and \(Setting.windowEnd)"
            )
        }
        guard start < end else {
            throw GenerationError(
                usage: true,
                "the window start \(start.shortISO8601) is not before its end \(end.shortISO8601); pass \(Setting.windowStart) earlier than \(Setting.windowEnd)"
            )
        }
        return ResolvedWindow(from: start, to: end)
    }
}
