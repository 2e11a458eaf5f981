// Writes the blob workload of Benchmarks/compare.sh: a dataset folder whose container
// holds N photos of about 30 KB (portraits with deterministic grain, so JPEG cannot shrink
// them), and nothing else.
//
//   swift run -c release photo-fixture <folder> [count]
import Foundation
import SeedKit

let arguments = CommandLine.arguments
guard arguments.count > 1 else {
    FileHandle.standardError.write(Data("usage: photo-fixture <folder> [count]\n".utf8))
    exit(64)
}
let folder = URL(fileURLWithPath: arguments[1])
let count = arguments.count > 2 ? Int(arguments[2])! : 1000
let images = folder.appendingPathComponent("images")
try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)

var random = SeedRandom(seed: 30_000)
var total = 0
for index in 0..<count {
    var pixels = Portrait.pixels(name: "Photo \(index)", index: index)
    // Grain of ±48 per channel: about 30 KB at quality 85 for a 256 × 256 portrait.
    for i in pixels.indices {
        let noise = Int(random.below(97)) - 48
        pixels[i] = UInt8(clamping: Int(pixels[i]) + noise)
    }
    let jpeg = try JPEG.encodeRGB(pixels, width: Portrait.size, height: Portrait.size, quality: 85)
    total += jpeg.count
    try Data(jpeg).write(to: images.appendingPathComponent(String(format: "photo-%04d.jpg", index)))
}
let yaml = """
    # Blob benchmark dataset written by photo-fixture: \(count) photos, nothing else.
    name: photos
    seed: 1
    window: { from: today, days: 1 }
    containers:
      - name: speakers
        access: container
        images: images/

    """
try Data(yaml.utf8).write(to: folder.appendingPathComponent("dataset.yaml"))
print("\(count) photos, \(total / max(count, 1)) bytes on average, in \(images.path)")
