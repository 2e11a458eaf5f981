import AzureStorage
import Foundation

/// The functions an expression may call, each checked for its name and count of arguments when
/// the file is read. Text is counted and cut in Unicode scalars and compared by bytes; there is
/// no clock (an expression is a function of the entity alone).
enum Functions {
    /// Name → (fewest, most) arguments.
    static let arity: [String: (Int, Int)] = [
        "upper": (1, 1), "lower": (1, 1), "trim": (1, 1), "length": (1, 1), "substring": (2, 3), "concat": (1, 16),
        "replace": (3, 3), "contains": (2, 2), "startsWith": (2, 2), "endsWith": (2, 2), "text": (1, 1), "number": (1, 1),
        "round": (1, 1), "floor": (1, 1), "ceil": (1, 1), "abs": (1, 1), "min": (2, 2), "max": (2, 2),
        "if": (3, 3), "coalesce": (2, 16), "has": (1, 1),
        "addDays": (2, 2), "addHours": (2, 2), "addMinutes": (2, 2), "addSeconds": (2, 2), "daysBetween": (2, 2),
        "year": (1, 1), "month": (1, 1), "day": (1, 1), "hour": (1, 1), "date": (1, 1),
    ]

    /// Every call names a function with the right count of arguments; `has` names a property.
    static func check(_ node: ComputeExpression.Node) throws(ComputeError) {
        switch node {
        case .literal, .property: return
        case .unary(_, let a): try check(a)
        case .binary(_, let a, let b):
            try check(a)
            try check(b)
        case .call(let name, let args):
            guard let (fewest, most) = arity[name] else {
                throw ComputeError(
                    "unknown function '\(Printable.escaped(name, quotes: false))' (there are: \(arity.keys.sorted().joined(separator: ", ")))")
            }
            guard (fewest...most).contains(args.count) else {
                throw ComputeError(
                    "\(name)() takes \(fewest == most ? "\(fewest)" : "\(fewest) to \(most)") argument\(most == 1 ? "" : "s"), not \(args.count)")
            }
            if name == "has", case .property = args[0] {} else if name == "has" { throw ComputeError("has() takes a property name") }
            for arg in args { try check(arg) }
        }
    }

    static func call(_ name: String, _ args: [ComputeExpression.Node], _ e: Evaluator) throws(ComputeError) -> ComputeValue {
        // Lazy ones first: only the branch taken (or the first present value) is evaluated.
        switch name {
        case "if":
            guard case .bool(let c) = try e.value(args[0]) else { throw ComputeError("if() takes true or false first") }
            return try e.value(c ? args[1] : args[2])
        case "coalesce":
            for arg in args.dropLast() {
                if case .property(let p) = arg, e.entity[p] == nil, !p.utf8.elementsEqual("PartitionKey".utf8), !p.utf8.elementsEqual("RowKey".utf8) {
                    continue
                }
                return try e.value(arg)
            }
            return try e.value(args[args.count - 1])
        case "has":
            guard case .property(let p) = args[0] else { throw ComputeError("has() takes a property name") }
            return .bool(e.entity[p] != nil || p.utf8.elementsEqual("PartitionKey".utf8) || p.utf8.elementsEqual("RowKey".utf8))
        default: break
        }
        var values: [ComputeValue] = []
        for arg in args { values.append(try e.value(arg)) }
        func text(_ i: Int) throws(ComputeError) -> String {
            guard case .text(let t) = values[i] else { throw ComputeError("\(name)() takes text, not \(values[i].kind)") }
            return t
        }
        func int(_ i: Int) throws(ComputeError) -> Int64 {
            guard case .int(let v) = values[i] else { throw ComputeError("\(name)() takes a whole number, not \(values[i].kind)") }
            return v
        }
        func date(_ i: Int) throws(ComputeError) -> EdmDateTime {
            guard case .date(let d) = values[i] else { throw ComputeError("\(name)() takes a date, not \(values[i].kind)") }
            return d
        }
        func number(_ i: Int) throws(ComputeError) -> Double {
            switch values[i] {
            case .int(let v): return Double(v)
            case .double(let v): return v
            default: throw ComputeError("\(name)() takes a number, not \(values[i].kind)")
            }
        }
        func whole(_ v: Double) throws(ComputeError) -> ComputeValue {
            guard let i = Int64(exactly: v) else { throw ComputeError("\(name)() of \(EdmValue.double(v).text) is not a 64-bit whole number") }
            return .int(i)
        }
        func shifted(_ ticksPer: Int64) throws(ComputeError) -> ComputeValue {
            let (d, n) = (try date(0), try int(1))
            let delta = n.multipliedReportingOverflow(by: ticksPer)
            let ticks = d.ticks.addingReportingOverflow(delta.partialValue)
            let moved = EdmDateTime(ticks: ticks.partialValue)
            guard !delta.overflow, !ticks.overflow, moved.isInAzureRange else {
                throw ComputeError("\(name)() leaves the dates Azure stores (1601 to 9999)")
            }
            return .date(moved)
        }
        switch name {
        // Case mapping may grow text (ß → SS): bounded as every text made is.
        case "upper": return try Evaluator.text(try text(0).uppercased())
        case "lower": return try Evaluator.text(try text(0).lowercased())
        case "trim": return .text(try text(0).trimmingCharacters(in: .whitespacesAndNewlines))
        case "length": return .int(Int64(try text(0).unicodeScalars.count))
        case "substring":
            let scalars = Array(try text(0).unicodeScalars)
            let start = try int(1)
            // Checked: a start or count near Int64's ends is outside, never a trap.
            let (rest, restOverflow) = Int64(scalars.count).subtractingReportingOverflow(start)
            let count = values.count > 2 ? try int(2) : rest
            let (end, endOverflow) = start.addingReportingOverflow(count)
            guard !restOverflow, !endOverflow, start >= 0, count >= 0, start <= scalars.count, end <= scalars.count else {
                throw ComputeError("substring(\(start)\(values.count > 2 ? ", \(count)" : "")) is outside text of \(scalars.count) characters")
            }
            var out = String.UnicodeScalarView()
            out.append(contentsOf: scalars[Int(start)..<Int(start + count)])
            return .text(String(out))
        case "concat": return try Evaluator.text(values.map(\.text).joined())
        case "replace": return try Evaluator.text(Retype.replacingBytes(of: try text(1), with: try text(2), in: try text(0)))
        case "contains":
            let (t, s) = (Array(try text(0).utf8), Array(try text(1).utf8))
            return .bool(s.isEmpty || (s.count <= t.count && (0...(t.count - s.count)).contains { t[$0..<($0 + s.count)].elementsEqual(s) }))
        case "startsWith": return .bool(try text(0).utf8.starts(with: try text(1).utf8))
        case "endsWith": return .bool(try text(0).utf8.reversed().starts(with: try text(1).utf8.reversed()))
        case "text": return try Evaluator.text(values[0].text)
        case "number":
            let t = try text(0)
            if let v = Int64(t) { return .int(v) }
            if let v = Double(t), v.isFinite { return .double(v) }
            throw ComputeError("number('\(Printable.escaped(String(t.prefix(64)), quotes: false))'): not a number")
        // A whole number is its own rounding: never through a Double, which holds 53 bits.
        case "round", "floor", "ceil":
            if case .int = values[0] { return values[0] }
            let rule: FloatingPointRoundingRule = name == "round" ? .toNearestOrAwayFromZero : name == "floor" ? .down : .up
            return try whole((try number(0)).rounded(rule))
        case "abs":
            if case .int(let v) = values[0] {
                guard v != .min else { throw ComputeError("abs(\(v)) overflows a 64-bit whole number") }
                return .int(Swift.abs(v))
            }
            return .double(Swift.abs(try number(0)))
        case "min", "max":
            let c = try Evaluator.compare(values[0], values[1], name)
            return (name == "min") == (c <= 0) ? values[0] : values[1]
        case "addDays": return try shifted(EdmDateTime.ticksPerDay)
        case "addHours": return try shifted(3600 * EdmDateTime.ticksPerSecond)
        case "addMinutes": return try shifted(EdmDateTime.ticksPerMinute)
        case "addSeconds": return try shifted(EdmDateTime.ticksPerSecond)
        case "daysBetween":
            let (a, b) = (try date(0), try date(1))
            let days = (b.ticks - a.ticks) / EdmDateTime.ticksPerDay
            return .int(days)
        case "year": return .int(Int64(try date(0).components.year))
        case "month": return .int(Int64(try date(0).components.month))
        case "day": return .int(Int64(try date(0).components.day))
        case "hour": return .int(Int64(try date(0).components.hour))
        case "date":
            let d = try date(0)
            return .date(EdmDateTime(ticks: d.ticks - d.ticks % EdmDateTime.ticksPerDay))
        default: throw ComputeError("unknown function '\(name)'")
        }
    }
}
