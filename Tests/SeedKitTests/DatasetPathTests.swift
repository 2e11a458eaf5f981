import Foundation
import Testing

@testable import SeedKit

/// Every path a dataset names stays inside its folder (issue 28, item 2): a dataset's author —
/// or a scanned account's owner, through `scan` — cannot make `apply` publish a folder of this
/// machine in a public container, nor read a template from elsewhere.
@Suite struct DatasetPathTests {
    private func loadError(_ prepare: (URL) throws -> Void = { _ in }, _ change: (String) -> String) throws -> String {
        try TestSupport.loadError(prepare, change)
    }

    @Test func imagesOutsideTheFolderAreRefused() throws {
        for path in ["..", "../", "/etc", "images/../..", "./images/../../x"] {
            let message = try loadError { $0.replacingOccurrences(of: "images: images/", with: "images: \(path)") }
            #expect(message.contains("images: '\(path)' leads out of the dataset's folder"), "\(path): \(message)")
        }
    }

    @Test func aSymbolicLinkLeadingOutIsRefused() throws {
        let message = try loadError({ copy in
            try FileManager.default.createSymbolicLink(atPath: copy.appendingPathComponent("outside").path, withDestinationPath: "/etc")
        }) { $0.replacingOccurrences(of: "images: images/", with: "images: outside") }
        #expect(message.contains("images: 'outside' is a symbolic link leading out of the dataset's folder"), "\(message)")
    }

    @Test func templatesOutsideTheFolderAreRefused() throws {
        let folder = try loadError { $0.replacingOccurrences(of: "templates: templates", with: "templates: ../../Templates") }
        #expect(folder.contains("templates: '../../Templates' leads out of the dataset's folder"), "\(folder)")
        let file = try loadError { $0.replacingOccurrences(of: "{ template: bio.mustache }", with: "{ template: ../../../../etc/hostname }") }
        #expect(file.contains("template '../../../../etc/hostname' leads out of the templates folder"), "\(file)")
    }
}
