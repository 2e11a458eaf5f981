import AzureStorage

extension WindowSpec.Start {
    /// Parses `today`, `today+N`, `today-N` or an absolute date/timestamp.
    init?(_ text: String) {
        if text == "today" {
            self = .today(offsetDays: 0)
        } else if text.hasPrefix("today+") || text.hasPrefix("today-"), let n = Int(text.dropFirst(5)) {
            self = .today(offsetDays: n)
        } else if let date = EdmDateTime(iso8601: text) {
            self = .absolute(date)
        } else {
            return nil
        }
    }
}
