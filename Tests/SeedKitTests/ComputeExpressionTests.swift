import AzseedTestSupport
import AzureStorage
import Foundation
import PropertyBased
import Testing

@testable import SeedKit

/// `compute`'s expressions (issue 49, item 5): read whole when the file is read, evaluated as a
/// pure function of the entity — integers never wrap, text compares by bytes, no clock.
@Suite struct ComputeExpressionTests {
    static let entity = TableEntity(
        partitionKey: "p", rowKey: "r",
        properties: [
            "Capacity": .int32(120), "Big": .int64(1 << 62), "Price": .double(2.5), "City": .string("  Oslo "), "Open": .boolean(true),
            "StartsAt": .dateTime(EdmDateTime(year: 2026, month: 11, day: 29, hour: 10)), "Name": .string("Caf\u{E9}"),
            "Max": .int64(.max), "Odd": .int64(9_007_199_254_740_993), "Sharp": .string(String(repeating: "\u{DF}", count: 20_000)),
        ])

    static func value(_ source: String) throws -> ComputeValue {
        try ComputeExpression.parse(source).evaluate(entity).get()
    }

    @Test func expressionsEvaluateAsWritten() throws {
        let cases: [(String, ComputeValue)] = [
            ("Capacity * 2 + 10", .int(250)), ("Capacity / 7", .int(17)), ("Capacity % 7", .int(1)), ("-Capacity", .int(-120)),
            ("Price * 2", .double(5)), ("Capacity + Price", .double(122.5)), ("upper(trim(City)) + '!'", .text("OSLO!")),
            ("length(Name)", .int(4)), ("substring(Name, 1, 2)", .text("af")), ("substring(Name, 3)", .text("\u{E9}")),
            ("if(Capacity >= 100, 'large', 'small')", .text("large")), ("Capacity > 100 and not Open", .bool(false)),
            ("coalesce(Nickname, Name)", .text("Caf\u{E9}")), ("has(Nickname) or has(Name)", .bool(true)),
            ("addDays(StartsAt, 7)", .date(EdmDateTime(year: 2026, month: 12, day: 6, hour: 10))),
            ("addHours(StartsAt, -10) == date(StartsAt)", .bool(true)),
            ("daysBetween(datetime'2026-01-01T00:00:00Z', StartsAt)", .int(332)), ("year(StartsAt) * 100 + month(StartsAt)", .int(202611)),
            ("concat(PartitionKey, '/', RowKey, '/', Capacity)", .text("p/r/120")), ("'it''s'", .text("it's")),
            ("replace(Name, 'f', 'ff')", .text("Caff\u{E9}")),
            ("contains(Name, 'af') and startsWith(Name, 'C') and endsWith(Name, '\u{E9}')", .bool(true)),
            ("round(Price)", .int(3)), ("floor(-Price)", .int(-3)), ("max(Capacity, 200)", .int(200)), ("number('42') + 1", .int(43)),
            ("text(Capacity) + 'x'", .text("120x")),
            // A whole number rounds to itself, never through a Double's 53 bits.
            ("round(Odd)", .int(9_007_199_254_740_993)), ("floor(Odd)", .int(9_007_199_254_740_993)), ("ceil(Max)", .int(.max)),
        ]
        for (source, expected) in cases {
            #expect(try Self.value(source) == expected, "\(source)")
        }
        // By bytes: a decomposed é is not the precomposed one, nor ordered as Swift would.
        #expect(try Self.value("Name == 'Cafe\u{301}'") == .bool(false))
        #expect(try Self.value("'Z' < 'a'") == .bool(true))
    }

    @Test func whatCannotBeComputedFailsTheEntityNotTheRun() throws {
        let failing = [
            ("Big * 4", "overflows"), ("Capacity / 0", "division by zero"), ("Nickname + 'x'", "does not have"),
            ("Capacity + 'x'", "takes numbers"), ("upper(Capacity)", "takes text"), ("addDays(StartsAt, 3000000)", "1601 to 9999"),
            ("substring(Name, 9)", "outside"), ("if(Capacity, 1, 2)", "true or false"), ("Open < true", "compares"),
            // From an attacker's review: these trapped (the process died) or grew past what Azure stores.
            ("substring(Name, 1, Max)", "outside"), ("substring(Name, 0 - Max)", "outside"), ("upper(Sharp)", "longer than"),
        ]
        for (source, why) in failing {
            let result = try ComputeExpression.parse(source).evaluate(Self.entity)
            guard case .failure(let error) = result else {
                Issue.record("\(source) gave \(result)")
                continue
            }
            #expect(error.description.contains(why), "\(source): \(error)")
        }
    }

    @Test func aMistakeIsFoundWhenTheFileIsRead() {
        let wrong = [
            ("Capacity +", "ends where a value"), ("(Capacity", "not closed"), ("frobnicate(1)", "unknown function"),
            ("upper(1, 2)", "takes 1 argument"), ("has('x')", "has() takes a property"), ("'open", "no closing quote"),
            ("datetime'soon'", "not a date"), ("Capacity $ 2", "unexpected '$'"), ("1 2", "unexpected '2'"),
            (String(repeating: "(", count: 40) + "1" + String(repeating: ")", count: 40), "nests deeper"),
            (String(repeating: "1+", count: 3000) + "1", "longer than"),
        ]
        for (source, why) in wrong {
            #expect(throws: ComputeError.self, "\(source.prefix(40))") { try ComputeExpression.parse(source) }
            do { _ = try ComputeExpression.parse(source) } catch { #expect(error.description.contains(why), "\(source.prefix(40)): \(error)") }
        }
    }

    /// Whole-number arithmetic is Swift's, checked: an overflow fails, never wraps.
    @Test func integerArithmeticIsExactOrFails() async {
        await propertyCheck(input: Gen.int64(in: Int64.min...Int64.max), Gen.int64(in: Int64.min...Int64.max)) { a, b in
            let entity = TableEntity(partitionKey: "p", rowKey: "r", properties: ["A": .int64(a), "B": .int64(b)])
            for (op, swift) in [
                ("+", a.addingReportingOverflow(b)), ("-", a.subtractingReportingOverflow(b)), ("*", a.multipliedReportingOverflow(by: b)),
            ] {
                let result = try? ComputeExpression.parse("A \(op) B").evaluate(entity).get()
                #expect(result == (swift.overflow ? nil : .int(swift.partialValue)), "\(a) \(op) \(b)")
            }
        }
    }

    @Test func computeWritesTheTypeAskedThenThePropertysThenTheValues() {
        func run(_ source: String, _ type: EdmType?, on entity: TableEntity = Self.entity, name: String = "Out") -> EntityOutcome {
            EntityChange.compute(name: name, expression: try! ComputeExpression.parse(source), type: type, ifMissing: false).apply(to: entity)
        }
        #expect(run("Capacity * 2", nil) == .replaced(Self.entity.with("Out", .int32(240))))
        #expect(run("Capacity * 2", .int64) == .replaced(Self.entity.with("Out", .int64(240))))
        #expect(run("Capacity + 1", nil, name: "Big") == .replaced(Self.entity.with("Big", .int64(121))))
        #expect(run("'7'", .int32) == .replaced(Self.entity.with("Out", .int32(7))))
        guard case .failed = run("Price", .int32) else {
            Issue.record("2.5 was written as an Int32")
            return
        }
    }
}
