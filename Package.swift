// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "swift-keychain-linux",
    products: [
        .library(name: "KeychainCore", targets: ["KeychainCore"]),
        .library(name: "Valet", targets: ["Valet"]),
        .library(name: "UICKeyChainStore", targets: ["UICKeyChainStore"]),
        .library(name: "Locksmith", targets: ["Locksmith"]),
        .executable(name: "keychain", targets: ["keychain"]),
        .executable(name: "keychain-bench", targets: ["keychain-bench"]),
    ],
    targets: [
        // C interop: each system library behind its own small target.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "CKeyring"),
        .target(name: "CSystem"),
        // libcurl, loaded at run time by the sync engine only (its headers from libcurl4-openssl-dev).
        .target(name: "CCurl"),
        // sd-bus, loaded at run time by `keychain serve` only (libsystemd0; no headers needed).
        .target(name: "CSDBus"),
        // The login's PAM module (docs/login.md), compiled here as a check; installed as built by
        // `cc -shared` alone, so that no Swift runtime enters the login program. No libpam headers needed.
        .target(name: "CPAMKeychain"),

        // The system layer: one function per system call, `Errno`, the locks; the only importer of CSystem.
        .target(name: "KeychainSystem", dependencies: ["CSystem"]),
        .target(name: "KeychainCore", dependencies: ["CSQLite", "COpenSSL", "CKeyring", "KeychainSystem", "CCurl"]),
        // Valet's naming (identifiers, accessibility, service strings), Foundation-free so that
        // the command can address Valets' items without loading Foundation.
        .target(name: "ValetNaming", dependencies: ["KeychainCore"]),
        .target(name: "Valet", dependencies: ["KeychainCore", "KeychainSystem", "ValetNaming"]),
        .target(name: "UICKeyChainStore", dependencies: ["KeychainCore"]),
        .target(name: "Locksmith", dependencies: ["KeychainCore"]),
        // The Secret Service provider (`keychain serve`): the vault on the session bus.
        .target(name: "KeychainServe", dependencies: ["KeychainCore", "KeychainSystem", "CSDBus"]),
        .target(name: "KeychainCLI", dependencies: ["KeychainCore", "KeychainSystem", "ValetNaming", "KeychainServe"]),
        .executableTarget(name: "keychain", dependencies: ["KeychainCLI"]),
        // The benchmark against the floors (raw SQLite, raw AES-GCM) and the peers: a program, not a test.
        .executableTarget(
            name: "keychain-bench", dependencies: ["KeychainCore", "KeychainSystem", "KeychainServe", "Valet", "ValetNaming", "KeychainTestSupport", "CSQLite", "COpenSSL"]),
        // The reliability suite (crashes, contention, corruption) and the worker processes it kills.
        .executableTarget(
            name: "keychain-reliability", dependencies: ["KeychainCore", "KeychainSystem", "Valet", "ValetNaming", "KeychainTestSupport", "CSQLite", "CKeyring", "COpenSSL"]),

        // libFuzzer targets for every parser of untrusted bytes (built by scripts/fuzz.sh).
        .target(name: "KeychainFuzzTargets", dependencies: ["KeychainCore", "Locksmith", "KeychainCLI", "KeychainServe"], path: "Fuzz/Targets"),

        // Helpers shared by the test targets (temporary vaults, running the built `keychain`).
        .target(name: "KeychainTestSupport", dependencies: ["KeychainCore", "CSQLite"], path: "Tests/KeychainTestSupport"),
        .testTarget(name: "KeychainCoreTests", dependencies: ["KeychainCore", "KeychainSystem", "KeychainTestSupport", "keychain"], exclude: ["Fixtures"]),
        .testTarget(name: "ValetTests", dependencies: ["Valet", "KeychainCore", "KeychainTestSupport", "keychain", "keychain-reliability"]),
        .testTarget(name: "UICKeyChainStoreTests", dependencies: ["UICKeyChainStore", "KeychainCore", "KeychainTestSupport"]),
        .testTarget(name: "LocksmithTests", dependencies: ["Locksmith", "KeychainCore", "KeychainTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["KeychainFuzzTargets"]),
        // The Secret Service against other programs' items and its time bounds (private gnome-keyrings).
        .testTarget(
            name: "SecretServiceTests", dependencies: ["KeychainCore", "Valet", "UICKeyChainStore", "Locksmith", "KeychainTestSupport", "keychain", "keychain-reliability"]),
        // `keychain serve` against real clients (secret-tool, Python secretstorage) on private session buses.
        .testTarget(name: "SecretServiceProviderTests", dependencies: ["KeychainCore", "KeychainServe", "KeychainTestSupport", "keychain"], exclude: ["Clients"]),
        .testTarget(name: "KeychainCLITests", dependencies: ["KeychainCLI", "Valet", "KeychainCore", "KeychainSystem", "KeychainTestSupport", "keychain"], exclude: ["Fixtures"]),
        // Sync between "machines" (homes) through a 3-member etcd cluster of each test's own.
        .testTarget(name: "SyncTests", dependencies: ["KeychainCore", "Valet", "KeychainTestSupport", "keychain", "keychain-reliability"]),
    ],
    swiftLanguageModes: [.v6]
)

// `import Security` on Linux: Apple's SecItem API over KeychainCore, so that code written for
// it (and every wrapper around it) compiles unchanged. On Apple platforms the system framework
// keeps the name.
#if os(Linux)
    package.products += [
        .library(name: "Security", targets: ["Security"]), .library(name: "LocalAuthentication", targets: ["LocalAuthentication"]),
    ]
    package.targets += [
        .target(name: "LocalAuthentication", dependencies: ["KeychainCore"]),
        .target(name: "Security", dependencies: ["KeychainCore", "LocalAuthentication"]),
        .testTarget(name: "SecurityTests", dependencies: ["Security", "LocalAuthentication", "KeychainCore", "Valet", "KeychainTestSupport"]),
    ]
    // The fuzz targets take Security's parser of caller dictionaries too.
    for target in package.targets where target.name == "KeychainFuzzTargets" { target.dependencies.append("Security") }
    // Valet reads migration queries as SecItem reads them, and brings Apple's names as Foundation does there.
    for target in package.targets where target.name == "Valet" { target.dependencies.append("Security") }
#endif
