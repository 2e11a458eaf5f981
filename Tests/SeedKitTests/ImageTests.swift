import Foundation
import Testing

@testable import SeedKit

@Suite struct ImageTests {
    static let speakers = [
        "Bart Tubalinal": "BTubalinal.jpg", "Bert Johnson": "BJohnson.jpg", "Travis Nielsen": "TNielsen.jpg",
        "Matt Morse": "MMorse.jpg", "Mo Omar": "MOmar.jpg", "Darya Orlova": "DOrlova.jpg",
        "Callie Jones": "CJones.jpg", "Ela Gardner": "EGardner.jpg",
    ]
    static let order = ["Bart Tubalinal", "Bert Johnson", "Travis Nielsen", "Matt Morse", "Mo Omar", "Darya Orlova", "Callie Jones", "Ela Gardner"]

    @Test func shippedPortraitsAreValidDistinctJPEGs() throws {
        var seen = Set<Data>()
        for file in Self.speakers.values {
            let bytes = try Data(contentsOf: TestSupport.speakeasy.appendingPathComponent("images/\(file)"))
            let info = try JPEG.check([UInt8](bytes)).get()
            #expect(info == JPEG.Info(width: 256, height: 256, components: 3))
            seen.insert(bytes)
        }
        #expect(seen.count == 8)
    }

    @Test func portraitsAreRedrawnByteForByte() throws {
        for (index, name) in Self.order.enumerated() {
            let shipped = try Data(contentsOf: TestSupport.speakeasy.appendingPathComponent("images/\(Self.speakers[name]!)"))
            #expect(try Portrait.jpeg(name: name, index: index) == [UInt8](shipped), "\(name)")
        }
    }

    @Test func initials() {
        #expect(Portrait.initials(of: "Bart Tubalinal") == "BT")
        #expect(Portrait.initials(of: "mo omar") == "MO")
    }

    @Test func corruptMiddleIsRejected() throws {
        var bytes = try Portrait.jpeg(name: "Ela Gardner", index: 7)
        for i in stride(from: bytes.count / 2, to: bytes.count / 2 + 64, by: 1) { bytes[i] = 0xFF }
        #expect(throws: JPEGError.self) { try JPEG.check(bytes).get() }
    }
}
