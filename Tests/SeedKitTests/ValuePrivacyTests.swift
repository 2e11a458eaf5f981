import AzureStorage
import PropertyBased
import Testing

@testable import SeedKit

/// What `scan` may copy without --copy-values (``ValuePrivacy``).
@Suite struct ValuePrivacyTests {
    @Test func personalShapesAreNeverCopied() {
        for text in ["ann@example.org", "https://x.example", "http:victim.example:8080", "+1 (415) 555-0100", "Ann Lee"] {
            #expect(!ValuePrivacy.mayCopy(.string(text), seenIn: 100), "\(text)")
        }
        #expect(ValuePrivacy.mayCopy(.string("gold"), seenIn: 5))
        #expect(!ValuePrivacy.mayCopy(.string("gold"), seenIn: 4))
    }

    @Test func roundedRangesHoldWhatWasSeenWithoutItsExactBounds() async {
        #expect(ValuePrivacy.roundedOutward(Int64(85_000), Int64(85_000)) == (80_000, 90_000))
        #expect(ValuePrivacy.roundedOutward(Int64.min, Int64.max) == (Int64.min, Int64.max))  // no overflow at the ends
        await propertyCheck(input: Gen.int64(in: Int64.min...Int64.max), Gen.int64(in: Int64.min...Int64.max)) { a, b in
            let (low, high) = ValuePrivacy.roundedOutward(min(a, b), max(a, b))
            #expect(low <= min(a, b) && high >= max(a, b))
        }
    }
}
