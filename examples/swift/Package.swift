// swift-tools-version:6.1
import PackageDescription

// An app's package whose tests use AzseedTesting: each test gets its own seeded Azure Storage
// account, in memory, in the test process. Depend on azseed by URL in your own package; this
// example depends on the checkout it lives in.
let package = Package(
    name: "App",
    dependencies: [
        .package(name: "azseed", path: "../..")
    ],
    targets: [
        .target(
            name: "App",
            dependencies: [
                .product(name: "AzureStorage", package: "azseed"), .product(name: "SeedKit", package: "azseed"),
                .product(name: "SeedRunner", package: "azseed"),
            ]),
        .testTarget(name: "AppTests", dependencies: ["App", .product(name: "AzseedTesting", package: "azseed")]),
    ]
)
