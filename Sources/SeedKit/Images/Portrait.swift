/// Draws the placeholder speaker portraits shipped with the SpeakEasy dataset.
///
/// The original photos are not available, so each speaker gets a deterministic picture:
/// a background colour of its own, a head-and-shoulders silhouette and the speaker's
/// initials. Everything is integer arithmetic, so the pixels are identical everywhere.
public enum Portrait {
    public static let size = 256

    /// The RGB pixels of the portrait of `name`, coloured by `index`.
    public static func pixels(name: String, index: Int) -> [UInt8] {
        let n = size
        let palette: [(UInt8, UInt8, UInt8)] = [
            (0x2E, 0x86, 0xAB), (0xA2, 0x3B, 0x72), (0xF1, 0x8F, 0x01), (0x3B, 0x8E, 0x51),
            (0x6C, 0x4A, 0xB6), (0xC7, 0x3E, 0x1D), (0x1B, 0x99, 0x8B), (0x5D, 0x57, 0x6B),
        ]
        let bg = palette[index % palette.count]
        let figure: (UInt8, UInt8, UInt8) = (lighten(bg.0), lighten(bg.1), lighten(bg.2))
        var px = [UInt8](repeating: 0, count: n * n * 3)
        for y in 0..<n {
            for x in 0..<n {
                // A soft vertical gradient keeps the background from looking flat.
                let shade = UInt8(y * 40 / n)
                var c = (sub(bg.0, shade), sub(bg.1, shade), sub(bg.2, shade))
                let dxHead = x - n / 2
                let dyHead = y - n * 3 / 8
                let head = dxHead * dxHead + dyHead * dyHead <= (n / 6) * (n / 6)
                let dxBody = x - n / 2
                let dyBody = y - n
                let body = dxBody * dxBody * 100 / 144 + dyBody * dyBody <= (n * 5 / 12) * (n * 5 / 12)
                if head || body { c = figure }
                let o = (y * n + x) * 3
                px[o] = c.0
                px[o + 1] = c.1
                px[o + 2] = c.2
            }
        }
        drawText(initials(of: name), into: &px, top: n * 3 / 4 + 8, scale: 6, color: (0xFF, 0xFF, 0xFF))
        return px
    }

    /// The portrait of `name` as JPEG bytes.
    public static func jpeg(name: String, index: Int) throws(JPEGError) -> [UInt8] {
        try JPEG.encodeRGB(pixels(name: name, index: index), width: size, height: size, quality: 85)
    }

    /// The first letter of each word, upper-cased (`Bart Tubalinal` → `BT`).
    public static func initials(of name: String) -> String {
        String(name.split(separator: " ").compactMap(\.first).map { Character($0.uppercased()) })
    }

    private static func lighten(_ v: UInt8) -> UInt8 { UInt8((Int(v) + 255 * 2) / 3) }
    private static func sub(_ v: UInt8, _ d: UInt8) -> UInt8 { v > d ? v - d : 0 }

    private static func drawText(_ text: String, into px: inout [UInt8], top: Int, scale: Int, color: (UInt8, UInt8, UInt8)) {
        let glyphs = text.compactMap { BitmapFont.glyph($0) }
        let advance = (BitmapFont.width + 1) * scale
        let totalWidth = glyphs.count * advance - scale
        var left = (size - totalWidth) / 2
        for glyph in glyphs {
            for row in 0..<BitmapFont.height {
                for col in 0..<BitmapFont.width where glyph[row] & (1 << (BitmapFont.width - 1 - col)) != 0 {
                    for dy in 0..<scale {
                        for dx in 0..<scale {
                            let x = left + col * scale + dx
                            let y = top + row * scale + dy
                            guard x >= 0, x < size, y >= 0, y < size else { continue }
                            let o = (y * size + x) * 3
                            px[o] = color.0
                            px[o + 1] = color.1
                            px[o + 2] = color.2
                        }
                    }
                }
            }
            left += advance
        }
    }
}
