// Package gluetest is an in-process fake of the AWS Glue API (the JSON 1.1
// protocol, X-Amz-Target AWSGlue.*) covering what Floe's Glue mirror calls:
// GetDatabase, CreateDatabase, GetTable, CreateTable, UpdateTable and
// DeleteTable. It
// checks each call the way Glue does (VersionId of updates, names, required
// fields) and lets tests alter entries by hand, take it down and inspect
// what it holds. For tests only.
package gluetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// Table is a Glue table as the fake holds it.
type Table struct {
	Database    string
	Name        string
	TableType   string
	Parameters  map[string]string
	Location    string
	Columns     []Column
	Version     int
	SkipArchive bool // of the last update
}

// Column is a Glue column.
type Column struct {
	Name       string            `json:"Name"`
	Type       string            `json:"Type"`
	Comment    string            `json:"Comment,omitempty"`
	Parameters map[string]string `json:"Parameters,omitempty"`
}

// Server is the fake Glue endpoint.
type Server struct {
	URL string
	t   testing.TB
	srv *httptest.Server

	mu     sync.Mutex
	dbs    map[string]bool
	tables map[string]*Table // "db.name"
	calls  []string
	down   bool
	// BeforeUpdate, when set, runs inside UpdateTable before the version
	// check (a test can change the entry to provoke a conflict).
	BeforeUpdate func(*Table)
}

// New starts a fake Glue endpoint that stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{t: t, dbs: map[string]bool{}, tables: map[string]*Table{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// SetDown makes every call fail with 503 (true) or succeed again (false).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
}

// Calls returns the operations called so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Table returns a copy of a table, or false.
func (s *Server) Table(db, name string) (Table, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[db+"."+name]
	if !ok {
		return Table{}, false
	}
	c := *t
	c.Parameters = map[string]string{}
	for k, v := range t.Parameters {
		c.Parameters[k] = v
	}
	c.Columns = append([]Column(nil), t.Columns...)
	return c, true
}

// Databases returns whether each named database exists.
func (s *Server) Database(db string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dbs[db]
}

// Alter changes a table as someone editing Glue by hand would: it sets
// parameters and bumps the version.
func (s *Server) Alter(db, name string, params map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[db+"."+name]
	if !ok {
		s.t.Errorf("gluetest: altering missing table %s.%s", db, name)
		return
	}
	for k, v := range params {
		t.Parameters[k] = v
	}
	t.Version++
}

type glueErr struct {
	status int
	typ    string
	msg    string
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.calls = append(s.calls, target)
	down := s.down
	s.mu.Unlock()
	if down {
		writeErr(w, glueErr{http.StatusServiceUnavailable, "ServiceUnavailableException", "glue is down (gluetest)"})
		return
	}
	if r.Header.Get("Authorization") == "" {
		writeErr(w, glueErr{http.StatusBadRequest, "MissingAuthenticationTokenException", "request is not signed"})
		return
	}
	var out any
	var gerr *glueErr
	switch target {
	case "AWSGlue.GetDatabase":
		out, gerr = s.getDatabase(body)
	case "AWSGlue.CreateDatabase":
		out, gerr = s.createDatabase(body)
	case "AWSGlue.GetTable":
		out, gerr = s.getTable(body)
	case "AWSGlue.CreateTable":
		out, gerr = s.putTable(body, true)
	case "AWSGlue.UpdateTable":
		out, gerr = s.putTable(body, false)
	case "AWSGlue.DeleteTable":
		out, gerr = s.deleteTable(body)
	default:
		gerr = &glueErr{http.StatusBadRequest, "UnknownOperationException", "gluetest does not serve " + target}
	}
	if gerr != nil {
		writeErr(w, *gerr)
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

func writeErr(w http.ResponseWriter, e glueErr) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.Header().Set("X-Amzn-ErrorType", e.typ)
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": e.typ, "message": e.msg})
}

func bad(format string, args ...any) *glueErr {
	return &glueErr{http.StatusBadRequest, "InvalidInputException", fmt.Sprintf(format, args...)}
}

func (s *Server) getDatabase(body []byte) (any, *glueErr) {
	var in struct{ Name string }
	if err := json.Unmarshal(body, &in); err != nil || in.Name == "" {
		return nil, bad("GetDatabase needs Name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dbs[in.Name] {
		return nil, &glueErr{http.StatusBadRequest, "EntityNotFoundException", "Database " + in.Name + " not found."}
	}
	return map[string]any{"Database": map[string]any{"Name": in.Name}}, nil
}

func (s *Server) createDatabase(body []byte) (any, *glueErr) {
	var in struct{ DatabaseInput struct{ Name string } }
	if err := json.Unmarshal(body, &in); err != nil || in.DatabaseInput.Name == "" {
		return nil, bad("CreateDatabase needs DatabaseInput.Name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dbs[in.DatabaseInput.Name] {
		return nil, &glueErr{http.StatusBadRequest, "AlreadyExistsException", "Database already exists."}
	}
	s.dbs[in.DatabaseInput.Name] = true
	return map[string]any{}, nil
}

func (s *Server) getTable(body []byte) (any, *glueErr) {
	var in struct{ DatabaseName, Name string }
	if err := json.Unmarshal(body, &in); err != nil || in.DatabaseName == "" || in.Name == "" {
		return nil, bad("GetTable needs DatabaseName and Name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dbs[in.DatabaseName] {
		return nil, &glueErr{http.StatusBadRequest, "EntityNotFoundException", "Database " + in.DatabaseName + " not found."}
	}
	t, ok := s.tables[in.DatabaseName+"."+in.Name]
	if !ok {
		return nil, &glueErr{http.StatusBadRequest, "EntityNotFoundException", "Table " + in.Name + " not found."}
	}
	return map[string]any{"Table": map[string]any{
		"Name": t.Name, "DatabaseName": t.Database, "TableType": t.TableType, "Parameters": t.Parameters,
		"VersionId":         strconv.Itoa(t.Version),
		"StorageDescriptor": map[string]any{"Location": t.Location, "Columns": t.Columns},
	}}, nil
}

type tableInput struct {
	Name              string
	TableType         string
	Parameters        map[string]string
	StorageDescriptor *struct {
		Location string
		Columns  []Column
	}
}

func (s *Server) putTable(body []byte, create bool) (any, *glueErr) {
	var in struct {
		DatabaseName string
		TableInput   *tableInput
		VersionId    string
		SkipArchive  *bool
	}
	if err := json.Unmarshal(body, &in); err != nil || in.DatabaseName == "" || in.TableInput == nil || in.TableInput.Name == "" {
		return nil, bad("CreateTable/UpdateTable need DatabaseName and TableInput.Name")
	}
	ti := in.TableInput
	if ti.StorageDescriptor == nil {
		return nil, bad("TableInput.StorageDescriptor is required for an Iceberg table")
	}
	for _, c := range ti.StorageDescriptor.Columns {
		if c.Name == "" || c.Type == "" {
			return nil, bad("column without name or type: %+v", c)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dbs[in.DatabaseName] {
		return nil, &glueErr{http.StatusBadRequest, "EntityNotFoundException", "Database " + in.DatabaseName + " not found."}
	}
	key := in.DatabaseName + "." + ti.Name
	t, exists := s.tables[key]
	switch {
	case create && exists:
		return nil, &glueErr{http.StatusBadRequest, "AlreadyExistsException", "Table already exists."}
	case !create && !exists:
		return nil, &glueErr{http.StatusBadRequest, "EntityNotFoundException", "Table " + ti.Name + " not found."}
	case create:
		t = &Table{Database: in.DatabaseName, Name: ti.Name}
		s.tables[key] = t
	default:
		if s.BeforeUpdate != nil {
			s.BeforeUpdate(t)
		}
		if in.VersionId != "" && in.VersionId != strconv.Itoa(t.Version) {
			return nil, &glueErr{http.StatusBadRequest, "ConcurrentModificationException",
				fmt.Sprintf("VersionId %s is not the current %d", in.VersionId, t.Version)}
		}
		t.SkipArchive = in.SkipArchive != nil && *in.SkipArchive
	}
	t.TableType, t.Parameters, t.Location, t.Columns = ti.TableType, ti.Parameters, ti.StorageDescriptor.Location, ti.StorageDescriptor.Columns
	if t.Parameters == nil {
		t.Parameters = map[string]string{}
	}
	t.Version++
	return map[string]any{}, nil
}

func (s *Server) deleteTable(body []byte) (any, *glueErr) {
	var in struct{ DatabaseName, Name string }
	if err := json.Unmarshal(body, &in); err != nil || in.DatabaseName == "" || in.Name == "" {
		return nil, bad("DeleteTable needs DatabaseName and Name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[in.DatabaseName+"."+in.Name]; !ok {
		return nil, &glueErr{http.StatusBadRequest, "EntityNotFoundException", "Table " + in.Name + " not found."}
	}
	delete(s.tables, in.DatabaseName+"."+in.Name)
	return map[string]any{}, nil
}
