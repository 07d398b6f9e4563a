import Foundation
import KeychainTestSupport
import Testing

/// Code written against Apple's `Security` and `LocalAuthentication` compiles here as it does
/// there, warnings included: Swift imports C and Objective-C functions with discardable
/// results, so a project built with warnings as errors calls `SecItemDelete(query)` without
/// using its status.
@Suite("Apple's import, warnings included")
struct AppleImportWarningsTests {
    /// Calls whose results Apple-shaped code commonly ignores.
    static let snippet = """
        import Foundation
        import LocalAuthentication
        import Security

        func appleShaped() async throws {
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s"]
            SecItemDelete(query as CFDictionary)
            SecItemAdd(query as CFDictionary, nil)
            SecItemUpdate(query as CFDictionary, [kSecValueData as String: Data()] as CFDictionary)
            var result: CFTypeRef?
            SecItemCopyMatching(query as CFDictionary, &result)
            var bytes = [UInt8](repeating: 0, count: 16)
            SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes)
            SecCopyErrorMessageString(errSecItemNotFound, nil)
            SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .userPresence, nil)
            let context = LAContext()
            context.canEvaluatePolicy(.deviceOwnerAuthentication, error: nil)
            try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "r")
        }
        """

    @Test(
        "Apple-shaped calls that ignore a status or result compile with -warnings-as-errors against this package's Security and LocalAuthentication",
        .enabled(if: Self.compiler != nil, "swiftc is not on PATH")
    )
    func ignoredResultsCompileWithoutWarnings() throws {
        let build = (KeychainExecutable.path as NSString).deletingLastPathComponent
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources").path
        let directory = TemporaryDirectory()
        let file = directory.file("AppleShaped.swift", Self.snippet)
        var arguments = ["-typecheck", "-warnings-as-errors", "-I", build + "/Modules", "-I", sources + "/CSQLite", "-I", sources + "/COpenSSL"]
        for module in ["CCurl", "CKeyring", "CSystem"] { arguments += ["-Xcc", "-fmodule-map-file=\(build)/\(module).build/module.modulemap"] }
        let result = try Subprocess.run(
            Self.compiler!, arguments + [file],
            environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": directory.path, "TMPDIR": directory.path])
        #expect(result.status == 0, "\(result.stderr)")
    }

    /// The Swift compiler the suite runs with.
    static let compiler: String? = {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/swiftc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()
}
