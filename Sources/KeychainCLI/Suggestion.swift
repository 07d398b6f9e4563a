/// "Did you mean ...?": the known word closest to a mistyped one, as git suggests commands.
enum Suggestion {
    /// The candidate nearest `word` by optimal string alignment distance (an edit is an
    /// insertion, a deletion, a substitution or a swap of two neighbours), when it is close
    /// enough to be a typo of it: at most two edits, and fewer than the word has letters.
    static func nearest(_ word: String, among candidates: [String]) -> String? {
        let typed = Array(word.lowercased())
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = Self.distance(typed, Array(candidate.lowercased()))
            if distance <= 2, distance < typed.count, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// " (did you mean 'x'?)" for `word`, or nothing.
    static func hint(_ word: String, among candidates: [String]) -> String {
        nearest(word, among: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    private static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[a.count][b.count]
    }
}
