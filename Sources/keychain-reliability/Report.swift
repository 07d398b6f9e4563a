import Foundation

/// One check's outcome: whether it held, its figures, and what it found wrong.
struct CheckResult {
    let name: String
    var passed = true
    var skipped: String?
    var figures: [(String, String)] = []
    var failures: [String] = []
    var seconds = 0.0

    init(_ name: String) { self.name = name }

    mutating func figure(_ label: String, _ value: CustomStringConvertible) { figures.append((label, value.description)) }

    mutating func fail(_ message: String) {
        passed = false
        if failures.count < 20 { failures.append(message) }
    }

    mutating func skip(_ reason: String) { skipped = reason }
}

enum Report {
    static func print(_ result: CheckResult) {
        let status = result.skipped != nil ? "SKIPPED" : (result.passed ? "ok" : "FAILED")
        Swift.print("== \(result.name): \(status) (\(String(format: "%.1f", result.seconds)) s)")
        if let reason = result.skipped { Swift.print("   skipped: \(reason)") }
        for (label, value) in result.figures { Swift.print("   \(label): \(value)") }
        for failure in result.failures { Swift.print("   FAILURE: \(failure)") }
    }

    static func json(_ results: [CheckResult], mode: String) -> String {
        func quote(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        let checks = results.map { r in
            let figures = r.figures.map { "\(quote($0.0)): \(quote($0.1))" }.joined(separator: ", ")
            return "    {\"name\": \(quote(r.name)), \"passed\": \(r.passed), \"skipped\": \(r.skipped.map(quote) ?? "null"), "
                + "\"seconds\": \(String(format: "%.1f", r.seconds)), \"figures\": {\(figures)}, \"failures\": [\(r.failures.map(quote).joined(separator: ", "))]}"
        }
        return "{\n  \"mode\": \(quote(mode)),\n  \"date\": \(quote(ISO8601DateFormatter().string(from: Date()))),\n  \"checks\": [\n"
            + checks.joined(separator: ",\n") + "\n  ]\n}\n"
    }
}
