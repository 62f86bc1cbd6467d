package deprules

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/peage/appliance/internal/testenv"
)

const obsPath = module + "/internal/obs"

// TestLogKeysAreObsConstants: every key given to log/slog in the tree's code (the key-value
// arguments of Logger.Info, With, Log and the others, the key of slog.String, slog.Any, ...)
// is a constant of internal/obs, so that the daemons' logs can be joined on one spelling of
// each key (errors were logged under both "err" and "error"). Test files are not checked: what
// they log is no daemon's log.
func TestLogKeysAreObsConstants(t *testing.T) {
	testenv.Needs(t, testenv.Tree)
	pkgs := loadPackages(t)
	var bad []string
	for _, p := range pkgs {
		bad = append(bad, p.literalKeys()...)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	if len(bad) > 0 {
		t.Logf("%d log keys are not constants of %s: add the key there (KeyX) and use it", len(bad), obsPath)
	}
}

// TestLogKeyCheckFindsLiterals: the check above reports a literal key in each position slog
// takes one, and accepts the obs constants, a package's own constant naming one, and attributes
// built from them.
func TestLogKeyCheckFindsLiterals(t *testing.T) {
	const src = `package p

import (
	"context"
	"log/slog"

	"github.com/peage/appliance/internal/obs"
)

const localKey = "local"

const aliasKey = obs.KeyRoute

func f(ctx context.Context, log *slog.Logger, err error) {
	log.Info("ok", obs.KeyErr, err, slog.String(obs.KeyRoute, "r"), obs.KeyStatus, 200)
	log.With(obs.KeyComponent, "c").Warn("ok", aliasKey, "r")
	log.Error("bad1", "err", err)
	log.With("bad2", 1)
	log.LogAttrs(ctx, slog.LevelInfo, "bad3", slog.Int("n", 1))
	slog.InfoContext(ctx, "bad4", slog.Any(obs.KeyErr, err), localKey, 1)
	log.Log(ctx, slog.LevelWarn, "bad5", slog.Group("g", slog.String(obs.KeyRoute, "r")))
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exports := exportFiles(t, "log/slog", "context", obsPath)
	p := checkPackage(t, "example.com/p", []string{filepath.Join(dir, "p.go")}, exports)
	got := p.literalKeys()
	want := []string{`"err"`, `"bad2"`, `"n"`, `localKey`, `"g"`}
	if len(got) != len(want) {
		t.Fatalf("found %d literal keys, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.HasSuffix(got[i], w) {
			t.Errorf("finding %d = %q, want it to name %s", i, got[i], w)
		}
	}
}

type checkedPackage struct {
	fset     *token.FileSet
	files    []*ast.File
	info     *types.Info
	declared map[*types.Const]ast.Expr // the package's own constants and their values
}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Export     string
	Standard   bool
	DepOnly    bool
}

// loadPackages type-checks every package of the module from the export data the go command
// builds (what go/packages does, without the dependency).
func loadPackages(t *testing.T) []*checkedPackage {
	t.Helper()
	listed := goList(t, module+"/...")
	exports := map[string]string{}
	for _, p := range listed {
		exports[p.ImportPath] = p.Export
	}
	var out []*checkedPackage
	for _, p := range listed {
		if p.Standard || p.DepOnly || !strings.HasPrefix(p.ImportPath, module) {
			continue
		}
		if len(p.CgoFiles) > 0 {
			t.Fatalf("%s has cgo files, which this check does not read", p.ImportPath)
		}
		var files []string
		for _, f := range p.GoFiles {
			files = append(files, filepath.Join(p.Dir, f))
		}
		out = append(out, checkPackage(t, p.ImportPath, files, exports))
	}
	return out
}

func goList(t *testing.T, patterns ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Dir,GoFiles,CgoFiles,Export,Standard,DepOnly"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	var listed []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		listed = append(listed, p)
	}
	return listed
}

func exportFiles(t *testing.T, patterns ...string) map[string]string {
	exports := map[string]string{}
	for _, p := range goList(t, patterns...) {
		exports[p.ImportPath] = p.Export
	}
	return exports
}

func checkPackage(t *testing.T, path string, files []string, exports map[string]string) *checkedPackage {
	t.Helper()
	fset := token.NewFileSet()
	p := &checkedPackage{fset: fset, info: &types.Info{
		Uses:  map[*ast.Ident]types.Object{},
		Defs:  map[*ast.Ident]types.Object{},
		Types: map[ast.Expr]types.TypeAndValue{},
	}, declared: map[*types.Const]ast.Expr{}}
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		p.files = append(p.files, af)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	conf := types.Config{Importer: imp}
	if _, err := conf.Check(path, fset, p.files, p.info); err != nil {
		t.Fatalf("type-check %s: %v", path, err)
	}
	for _, f := range p.files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if c, ok := p.info.Defs[name].(*types.Const); ok && i < len(vs.Values) {
						p.declared[c] = vs.Values[i]
					}
				}
			}
		}
	}
	return p
}

// keyValueFrom: for the slog functions and *slog.Logger methods taking alternating keys and
// values (or Attrs), the index of the first such argument.
var keyValueFrom = map[string]int{
	"Debug": 1, "Info": 1, "Warn": 1, "Error": 1,
	"DebugContext": 2, "InfoContext": 2, "WarnContext": 2, "ErrorContext": 2,
	"Log": 3, "LogAttrs": 3, "With": 0,
	"Group": 1, // slog.Group(key, args...): its key is checked as an Attr's, then its args
}

// attrKey: the slog constructors of an Attr whose first argument is the key.
var attrKey = map[string]bool{
	"String": true, "Int": true, "Int64": true, "Uint64": true, "Float64": true, "Bool": true,
	"Time": true, "Duration": true, "Any": true, "Group": true,
}

// literalKeys lists, as "file:line: key", every key given to slog that is not an obs constant.
func (p *checkedPackage) literalKeys() []string {
	var bad []string
	report := func(e ast.Expr) {
		if p.isObsConstant(e) {
			return
		}
		pos := p.fset.Position(e.Pos())
		bad = append(bad, fmt.Sprintf("%s: log key %s", pos, types.ExprString(e)))
	}
	for _, f := range p.files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			name, ok := p.slogFunc(call)
			if !ok {
				return true
			}
			if attrKey[name] && len(call.Args) > 0 {
				report(call.Args[0])
			}
			from, ok := keyValueFrom[name]
			if !ok {
				return true
			}
			for i := from; i < len(call.Args); i++ {
				a := call.Args[i]
				if call.Ellipsis.IsValid() && i == len(call.Args)-1 {
					break // a spread []any or []Attr: its keys are checked where it is built
				}
				if p.isAttr(a) {
					continue
				}
				report(a)
				i++ // the value
			}
			return true
		})
	}
	return bad
}

// slogFunc names the log/slog function or *slog.Logger method a call is to.
func (p *checkedPackage) slogFunc(call *ast.CallExpr) (string, bool) {
	var id *ast.Ident
	switch fn := call.Fun.(type) {
	case *ast.SelectorExpr:
		id = fn.Sel
	case *ast.Ident:
		id = fn
	default:
		return "", false
	}
	obj, ok := p.info.Uses[id].(*types.Func)
	if !ok || obj.Pkg() == nil || obj.Pkg().Path() != "log/slog" {
		return "", false
	}
	sig := obj.Type().(*types.Signature)
	if recv := sig.Recv(); recv != nil {
		ptr, ok := recv.Type().(*types.Pointer)
		if !ok {
			return "", false
		}
		if named, ok := ptr.Elem().(*types.Named); !ok || named.Obj().Name() != "Logger" {
			return "", false
		}
	}
	return obj.Name(), true
}

func (p *checkedPackage) isAttr(e ast.Expr) bool {
	tv, ok := p.info.Types[e]
	if !ok {
		return false
	}
	named, ok := tv.Type.(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "log/slog" && named.Obj().Name() == "Attr"
}

func (p *checkedPackage) isObsConstant(e ast.Expr) bool {
	var id *ast.Ident
	switch x := e.(type) {
	case *ast.SelectorExpr:
		id = x.Sel
	case *ast.Ident:
		id = x
	default:
		return false
	}
	c, ok := p.info.Uses[id].(*types.Const)
	if !ok || c.Pkg() == nil {
		return false
	}
	if c.Pkg().Path() == obsPath {
		return true
	}
	// A package's own short name for an obs key (const keyErr = obs.KeyErr) is that key.
	v, ok := p.declared[c]
	return ok && v != e && p.isObsConstant(v)
}
