import AzureStorage

/// A Mustache template for generated text, rendered as plain text (no HTML escaping) by
/// `MustacheText`, in time linear in its size.
public struct Template: Sendable {
    /// Where the template came from, for errors.
    public var origin: String
    public var source: String
    /// Every name the template reads (`Name`, `speaker.Name`, section names), in order of appearance.
    public var variables: [String]
    let compiled: MustacheText

    /// Parses `source`; `origin` names it in errors (a file path, or `file:line`).
    public init(source: String, origin: String) throws(DatasetError) {
        self.origin = origin
        self.source = source
        do {
            compiled = try MustacheText.parse(source, maxDepth: Self.maxSectionDepth)
        } catch {
            throw DatasetError(file: origin, line: error.line, "\(error)")
        }
        // Read from the parsed template, so unknown names are rejected before generating.
        variables = compiled.variables
    }

    /// Renders with a context of names to text (and refs to their entities' fields).
    public func render(_ context: [ExactString: TemplateValue]) -> String {
        compiled.render(context)
    }

    /// How deep sections (`{{#Name}}`, `{{^Name}}`) may nest: parsing and rendering recurse
    /// once per level (1,000 levels once overflowed the stack: a segfault, no message).
    static let maxSectionDepth = 100
}
