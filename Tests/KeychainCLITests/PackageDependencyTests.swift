import Foundation
import KeychainTestSupport
import Testing

/// The README's dependency snippet resolves against this repository as it is published (its
/// main branch): a consumer package written from it finds the `Valet` product.
@Suite("The README's dependency snippet")
struct PackageDependencyTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Whether this checkout has the branch the snippet names (a clone of the published repository
    /// does) and can be cloned by SwiftPM, which refuses a git worktree (its `.git` is a file).
    static func isClonableWithMainBranch() -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.appendingPathComponent(".git").path, isDirectory: &isDirectory), isDirectory.boolValue,
            let result = try? Subprocess.run("/usr/bin/git", ["-C", root.path, "rev-parse", "--verify", "--quiet", "refs/heads/main"], environment: ["PATH": "/usr/bin:/bin"])
        else { return false }
        return result.status == 0
    }

    static var swift: String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test(
        "a package that depends on this repository as the README says resolves it and finds the Valet product",
        .enabled(if: isClonableWithMainBranch() && swift != nil, "needs git, swift on PATH and a clone (not a git worktree) with a main branch")
    )
    func readmeSnippetResolves() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let line = try #require(readme.split(separator: "\n").first { $0.hasPrefix(".package(url:") }, "the README shows a dependency by URL")
        // The snippet's own requirement (after the URL), against this checkout instead of the example host.
        let requirement = try #require(line.range(of: "\",").map { line[$0.upperBound...] })
        let dependency = ".package(url: \"file://\(Self.root.path)\",\(requirement)"
        let directory = TemporaryDirectory()
        let consumer = directory.path + "/consumer"
        try FileManager.default.createDirectory(atPath: consumer + "/Sources/Consumer", withIntermediateDirectories: true)
        let manifest = """
            // swift-tools-version:6.0
            import PackageDescription
            let package = Package(
                name: "Consumer",
                dependencies: [\(dependency)],
                targets: [.executableTarget(name: "Consumer", dependencies: [.product(name: "Valet", package: "\(Self.root.lastPathComponent)")])]
            )
            """
        try manifest.write(toFile: consumer + "/Package.swift", atomically: true, encoding: .utf8)
        try "import Valet\n".write(toFile: consumer + "/Sources/Consumer/main.swift", atomically: true, encoding: .utf8)
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": directory.path, "TMPDIR": directory.path]
        let resolved = try Subprocess.run(Self.swift!, ["package", "--package-path", consumer, "resolve"], environment: environment)
        #expect(resolved.status == 0, "\(dependency): \(resolved.stderr)")
        let described = try Subprocess.run(Self.swift!, ["package", "--package-path", consumer, "show-dependencies"], environment: environment)
        #expect(described.output.contains(Self.root.lastPathComponent), "\(described.output)\(described.stderr)")
    }
}
