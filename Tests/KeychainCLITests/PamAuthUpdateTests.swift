import Foundation
import KeychainTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's and Ubuntu's way to enable the module: the project's pam-auth-update profile.
@Suite("The pam-auth-update profile")
struct PamAuthUpdateTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardized.path

    /// The profile's fields: each name with its value, the lines below it joined by newlines.
    static func profile() throws -> [String: String] {
        let text = try String(contentsOfFile: repository + "/scripts/pam-configs/keychain", encoding: .utf8)
        var fields: [String: String] = [:]
        var current = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if let first = line.first, !first.isWhitespace, let colon = line.firstIndex(of: ":") {
                current = String(line[..<colon])
                fields[current] = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            } else if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                let value = fields[current, default: ""]
                fields[current] = (value.isEmpty ? "" : value + "\n") + line.trimmingCharacters(in: .whitespaces)
            }
        }
        return fields
    }

    static func words(_ line: Substring) -> [String] { line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) }

    @Test("the profile's lines are the module lines docs/login.md gives, each in the block after pam_permit.so (Additional)")
    func profileMatchesTheDocumentedLines() throws {
        let fields = try Self.profile()
        let documented = try LoginTestNeeds.documentedStack().split(separator: "\n").map { Self.words($0) }.filter { $0.contains("pam_keychain.so") }
        #expect(documented.count == 3, "\(documented)")
        for (type, field) in [("auth", "Auth"), ("session", "Session"), ("password", "Password")] {
            let lines = (fields[field] ?? "").split(separator: "\n").map { Self.words($0) }
            let documentedLines = documented.filter { $0.first == type }.map { Array($0.dropFirst()) }
            #expect(lines == documentedLines, "\(field): the profile says \(lines), docs/login.md \(documentedLines)")
            #expect(fields["\(field)-Type"] == "Additional", "\(field)-Type")
        }
        #expect(fields["Default"] == "no", "enabling the module is the administrator's own step")
    }

    /// Why pam-auth-update cannot be run in a throwaway root here, or nil.
    static let throwawayRootMissing: String? = {
        if let reason = LoginTestNeeds.unavailableReason { return reason }
        for tool in ["/usr/sbin/pam-auth-update", "/usr/bin/unshare"] where !FileManager.default.isExecutableFile(atPath: tool) {
            return "\(tool) is missing (apt-get install libpam-runtime util-linux)"
        }
        let probe = try? Subprocess.run("/usr/bin/unshare", ["--mount", "--propagation", "private", "/bin/true"], environment: ["PATH": "/usr/bin:/bin"])
        return probe?.status == 0 ? nil : "no mount namespace can be made here (unshare --mount): pam-auth-update is run on copies only"
    }()

    /// Run in a mount namespace of its own, over copies of what pam-auth-update reads and writes
    /// (`/etc/pam.d`, its state, debconf's) and of the PAM module directory, with a directory of
    /// root's in place of `/usr/local/bin`: the install steps of docs/login.md, then a login.
    /// Nothing of the machine's own changes.
    static let throwawayRootScript = """
        set -eu
        copies=$1 repository=$2 helper=$3 service=$4 user=$5
        security=$(dirname "$(ls /lib/*/security/pam_unix.so /lib64/security/pam_unix.so /lib/security/pam_unix.so 2>/dev/null | head -n 1)")
        for directory in /etc/pam.d /usr/share/pam-configs /var/lib/pam /var/cache/debconf "$security"; do
            mkdir -p "$copies$directory"
            cp -a "$directory/." "$copies$directory/"
            mount --bind "$copies$directory" "$directory"
        done
        install -d -m 0755 "$copies/bin"
        install -m 0755 "$helper" "$copies/bin/keychain"
        mount --bind "$copies/bin" /usr/local/bin
        "$repository/scripts/install-pam.sh" >/dev/null
        DEBIAN_FRONTEND=noninteractive pam-auth-update --enable keychain --force </dev/null
        printf '@include common-auth\\n@include common-account\\n@include common-session\\n@include common-password\\n' > "/etc/pam.d/$service"
        exec pamtester "$service" "$user" authenticate open_session
        """

    @Test(
        "pam-auth-update --enable keychain writes the profile's lines after pam_permit.so, and a login through those common-* files opens the vault",
        .enabled(if: throwawayRootMissing == nil, "\(throwawayRootMissing ?? "")"))
    func pamAuthUpdateWritesLinesThatOpenTheVault() throws {
        let fixture = try LoginIntegrationTests.LoginFixture(password: "Druidia-12345")
        let copies = TemporaryDirectory()
        let login = try Subprocess.run(
            "/usr/bin/unshare",
            [
                "--mount", "--propagation", "private", "/bin/bash", "-c", Self.throwawayRootScript, "bash", copies.path, Self.repository, fixture.helper, fixture.service,
                fixture.name,
            ],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], input: Data("Druidia-12345\n".utf8))
        #expect(login.status == 0, "\(login.output) \(login.stderr)")

        // What pam-auth-update wrote: our line in each file, below pam_permit.so's.
        for (file, type) in [("common-auth", "auth"), ("common-session", "session"), ("common-password", "password")] {
            let text = (try? String(contentsOfFile: copies.path + "/etc/pam.d/" + file, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { Self.words($0) }
            let ours = lines.firstIndex { $0 == [type, "optional", "pam_keychain.so", "/usr/local/bin/keychain"] }
            let permit = lines.firstIndex { $0 == [type, "required", "pam_permit.so"] }
            #expect(ours != nil && permit != nil && ours! > permit!, "\(file):\n\(text)")
        }
        let noninteractive = (try? String(contentsOfFile: copies.path + "/etc/pam.d/common-session-noninteractive", encoding: .utf8)) ?? ""
        #expect(!noninteractive.contains("pam_keychain.so"), "a cron job would start a bus: \(noninteractive)")

        // The login opened the vault, as the documented lines do.
        let status = try fixture.asUser(fixture.helper, ["status"])
        #expect(status.output.contains("passphrase:        set"), "\(status.output) \(status.stderr)")
        #expect(status.output.contains("locked:            no"), "unlocked by the login: \(status.output)")
        // The machine's own files are as they were.
        let machine = (try? String(contentsOfFile: "/etc/pam.d/common-auth", encoding: .utf8)) ?? ""
        #expect(!machine.contains("pam_keychain.so"), "pam-auth-update wrote the machine's own /etc/pam.d")
    }
}
