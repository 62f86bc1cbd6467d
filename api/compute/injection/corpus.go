package injection

import (
	"embed"
	"encoding/csv"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
)

//go:embed testdata/*.csv
var corpusFS embed.FS

// Sample is one labelled text of the public corpus (testdata/PROVENANCE).
type Sample struct {
	Text      string
	Injection bool
	Source    string
}

// Corpus reads the labelled public corpus: deepset/prompt-injections and Giskard's set.
func Corpus() ([]Sample, error) {
	var out []Sample
	files, _ := fs.Glob(corpusFS, "testdata/*.csv")
	for _, f := range files {
		b, _ := corpusFS.ReadFile(f)
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil || len(rows) < 2 {
			return nil, fmt.Errorf("corpus %s: %v", f, err)
		}
		head := rows[0]
		col := func(name string) int {
			for i, h := range head {
				if h == name {
					return i
				}
			}
			return -1
		}
		name := strings.TrimSuffix(path.Base(f), ".csv")
		for _, r := range rows[1:] {
			switch {
			case col("label") >= 0:
				out = append(out, Sample{Text: r[col("text")], Injection: r[col("label")] == "1", Source: name})
			case col("prompt") >= 0:
				out = append(out, Sample{Text: r[col("prompt")], Injection: true, Source: name})
			}
		}
	}
	return out, nil
}

// Score is how the scanner does on a corpus.
type Score struct {
	Injections, Benign  int
	TruePos, FalsePos   int
	Precision, Recall   float64
	TextsPerSecond      float64
	Missed, FalseAlarms []string
}

// Evaluate scans every sample and counts.
func Evaluate(samples []Sample) Score {
	var s Score
	start := time.Now()
	for _, x := range samples {
		flagged := Scan(x.Text).Flagged()
		if x.Injection {
			s.Injections++
		} else {
			s.Benign++
		}
		switch {
		case flagged && x.Injection:
			s.TruePos++
		case flagged:
			s.FalsePos++
			s.FalseAlarms = append(s.FalseAlarms, x.Text)
		case x.Injection:
			s.Missed = append(s.Missed, x.Text)
		}
	}
	if el := time.Since(start).Seconds(); el > 0 {
		s.TextsPerSecond = float64(len(samples)) / el
	}
	if s.TruePos+s.FalsePos > 0 {
		s.Precision = float64(s.TruePos) / float64(s.TruePos+s.FalsePos)
	}
	if s.Injections > 0 {
		s.Recall = float64(s.TruePos) / float64(s.Injections)
	}
	return s
}
