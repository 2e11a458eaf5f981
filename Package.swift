// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "azseed",
    products: [
        .executable(name: "azseed", targets: ["azseed"]),
        .library(name: "StorageProtocol", targets: ["StorageProtocol"]),
        .library(name: "AzureStorage", targets: ["AzureStorage"]),
        .library(name: "SeedKit", targets: ["SeedKit"]),
        .library(name: "SeedRunner", targets: ["SeedRunner"]),
        .library(name: "StorageEmulator", targets: ["StorageEmulator"]),
        // The emulator as SeedRunner's embedded storage (StorageSession's `.embedded`).
        .library(name: "EmbeddedEmulator", targets: ["EmbeddedEmulator"]),
        // Per-test storage for Swift Testing and XCTest: an in-process emulator, seeded.
        .library(name: "AzseedTesting", targets: ["AzseedTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.20.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.0.0"),
        // Test-only: the Mustache library azseed's own renderer replaced, to compare outputs.
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        // Test-only: property-based tests (round trips and invariants over generated inputs).
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CJPEG",
            path: "Sources/CJPEG",
            providers: [.apt(["libjpeg-dev"])]
        ),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // What the clients and the emulator share: EDM and entity JSON, names and their rules,
        // signing, error codes, the HTTP messages and transport. Public API only, so the emulator
        // could move to its own package without edits (docs/ARCHITECTURE.md).
        .target(
            name: "StorageProtocol",
            dependencies: [
                .product(name: "Logging", package: "swift-log"), "CCurl", "CLinux", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "AzureStorage",
            dependencies: [
                "StorageProtocol", .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "SeedKit",
            dependencies: [
                "AzureStorage",
                "CJPEG",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "StorageEmulator",
            dependencies: [
                "StorageProtocol",
                "CLinux",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "SeedRunner",
            dependencies: ["SeedKit", "AzureStorage"]
        ),
        // The emulator as SeedRunner's embedded storage: what the executable and AzseedTesting
        // supply, so SeedRunner itself links no server (a program seeding only real accounts
        // does not link it).
        .target(
            name: "EmbeddedEmulator",
            dependencies: ["SeedRunner", "StorageEmulator", "AzureStorage"]
        ),
        .target(
            name: "AzseedTesting",
            dependencies: [
                "SeedRunner", "SeedKit", "AzureStorage", "StorageEmulator", "EmbeddedEmulator", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "azseed",
            dependencies: [
                "SeedKit",
                "SeedRunner",
                "AzureStorage",
                "StorageEmulator",
                "EmbeddedEmulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            plugins: ["BuildInfo"]
        ),
        .plugin(name: "BuildInfo", capability: .buildTool(), path: "Plugins/BuildInfo"),
        .executableTarget(
            name: "generate-benchmark",
            dependencies: ["SeedKit", "AzureStorage"],
            path: "Benchmarks/GenerateBenchmark"
        ),
        .executableTarget(
            name: "photo-fixture",
            dependencies: ["SeedKit"],
            path: "Benchmarks/PhotoFixture"
        ),
        .executableTarget(
            name: "blob-transfer-benchmark",
            dependencies: ["StorageEmulator", "AzureStorage"],
            path: "Benchmarks/BlobTransfer"
        ),
        .executableTarget(
            name: "emulator-benchmark",
            dependencies: ["StorageEmulator", "AzureStorage"],
            path: "Benchmarks/EmulatorBenchmark"
        ),
        .target(
            name: "AzseedTestSupport",
            dependencies: ["StorageEmulator", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/AzseedTestSupport"
        ),
        .testTarget(
            name: "SeedKitTests",
            dependencies: [
                "SeedKit", "AzureStorage", "StorageProtocol", "AzseedTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Mustache", package: "swift-mustache"), .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .testTarget(
            name: "AzseedTestingTests",
            dependencies: ["AzseedTesting", "AzureStorage", "StorageProtocol"]
        ),
        .testTarget(
            name: "SeedRunnerTests",
            dependencies: [
                "SeedRunner", "SeedKit", "AzureStorage", "StorageProtocol", "StorageEmulator", "EmbeddedEmulator", "AzseedTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "AzureStorageTests",
            dependencies: [
                "AzureStorage", "StorageProtocol", "AzseedTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
        .testTarget(
            name: "StorageEmulatorTests",
            dependencies: [
                "StorageEmulator", "AzureStorage", "StorageProtocol", "AzseedTestSupport", .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The CLI's own tables (its flag spellings), tested inside the executable's module.
        .testTarget(
            name: "AzseedCLITests",
            dependencies: ["azseed", "AzureStorage", "StorageProtocol", "SeedKit", "SeedRunner", "StorageEmulator"]
        ),
        .testTarget(
            name: "CommandTests",
            dependencies: ["SeedKit", "AzureStorage", "StorageProtocol", "AzseedTestSupport", .product(name: "Crypto", package: "swift-crypto")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
