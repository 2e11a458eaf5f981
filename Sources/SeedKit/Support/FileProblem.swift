import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file-system failure as a short reason ("permission denied", "no space left on
/// device"), never Foundation's own error text, which names domains and codes.
public enum FileProblem {
    /// The POSIX reason under a Foundation error when there is one, else a plain phrase.
    public static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return posix(Int32(ns.code)) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return posix(Int32(underlying.code))
        }
        if ns.domain == NSCocoaErrorDomain {
            switch CocoaError.Code(rawValue: ns.code) {
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or folder"
            case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
            case .fileWriteOutOfSpace: return "no space left on device"
            case .fileWriteFileExists: return "a file of that name already exists"
            case .fileWriteInvalidFileName, .fileReadInvalidFileName: return "the file name is not valid here"
            case .fileWriteVolumeReadOnly: return "the file system is read-only"
            default: return "the file operation failed"
            }
        }
        return "the file operation failed"
    }

    /// `strerror` in lower case: "No such file or directory" → "no such file or directory".
    public static func posix(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
