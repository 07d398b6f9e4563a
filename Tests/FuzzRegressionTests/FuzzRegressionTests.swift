import Foundation
import KeychainFuzzTargets
import Testing

/// Every input in Fuzz/Corpus/<target>/ (the seeds, what fuzzing found interesting, and every
/// crash ever found, kept once fixed) goes through its parser again: none may crash.
@Suite("Fuzz corpus and past crashes replayed through every parser")
struct FuzzRegressionTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Fuzz/Corpus").standardized

    @Test(arguments: FuzzTarget.allCases)
    func replay(_ target: FuzzTarget) throws {
        let directory = Self.corpus.appendingPathComponent(target.rawValue)
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        #expect(!files.isEmpty, "Fuzz/Corpus/\(target.rawValue) has seeds")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
            target.run(bytes)
        }
    }
}
