import Foundation

/// Name/value pairs as a JSON array of two-element arrays, order kept.
enum MetadataCoding {
    static func encode(_ pairs: [(String, String)]) -> String {
        let array = pairs.map { [$0.0, $0.1] }
        guard let data = try? JSONSerialization.data(withJSONObject: array) else { return "[]" }
        return String(decoding: data, as: UTF8.self)
    }

    static func decode(_ text: String) -> [(String, String)] {
        guard let array = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String]] else { return [] }
        return array.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }
}
