// Package wasmbin reads and rewrites the parts of a WebAssembly binary that
// Arbor's build and benchmarks look at: its sections, the function bodies of
// the code section, the function names of the name section and the data
// segments. It knows the binary format only as far as the Go linker writes
// it for wasip1; anything else is an error, never a guess.
package wasmbin

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Section ids of the WebAssembly binary format.
const (
	SectionCustom    = 0
	SectionImport    = 2
	SectionCode      = 10
	SectionData      = 11
	SectionDataCount = 12
)

var header = []byte("\x00asm\x01\x00\x00\x00")

// Section is one section of a module: its id, its name for a custom section,
// and its contents (after the name, for a custom section).
type Section struct {
	ID   byte
	Name string
	Body []byte
}

// Sections splits a module into its sections, in order.
func Sections(bin []byte) ([]Section, error) {
	if !bytes.HasPrefix(bin, header) {
		return nil, errors.New("not a WebAssembly module (version 1)")
	}
	r := &reader{b: bin, off: len(header)}
	var out []Section
	for r.off < len(bin) {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		body, err := r.vec()
		if err != nil {
			return nil, fmt.Errorf("section %d at byte %d: %w", id, r.off, err)
		}
		s := Section{ID: id, Body: body}
		if id == SectionCustom {
			br := &reader{b: body}
			name, err := br.vec()
			if err != nil {
				return nil, fmt.Errorf("custom section name: %w", err)
			}
			s.Name, s.Body = string(name), body[br.off:]
		}
		out = append(out, s)
	}
	return out, nil
}

// Encode writes sections back as a module.
func Encode(sections []Section) []byte {
	out := append([]byte{}, header...)
	for _, s := range sections {
		body := s.Body
		if s.ID == SectionCustom {
			body = appendVec(nil, []byte(s.Name))
			body = append(body, s.Body...)
		}
		out = append(out, s.ID)
		out = appendVec(out, body)
	}
	return out
}

// Size is the number of bytes s takes in a module, its header included.
func (s Section) Size() int {
	n := len(s.Body)
	if s.ID == SectionCustom {
		n += uvarintLen(uint64(len(s.Name))) + len(s.Name)
	}
	return 1 + uvarintLen(uint64(n)) + n
}

// ImportedFunctions counts the functions an import section imports: they
// come first in the module's function index space.
func ImportedFunctions(body []byte) (int, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	funcs := 0
	for i := 0; i < n; i++ {
		for j := 0; j < 2; j++ { // module and field names
			if _, err := r.vec(); err != nil {
				return 0, fmt.Errorf("import %d: %w", i, err)
			}
		}
		kind, err := r.byte()
		if err != nil {
			return 0, err
		}
		switch kind {
		case 0: // function: type index
			funcs++
			_, err = r.u32()
		case 1: // table: reference type, limits
			if _, err = r.byte(); err == nil {
				err = r.limits()
			}
		case 2: // memory: limits
			err = r.limits()
		case 3: // global: value type, mutability
			_, err = r.bytes(2)
		default:
			err = fmt.Errorf("unknown import kind %d", kind)
		}
		if err != nil {
			return 0, fmt.Errorf("import %d: %w", i, err)
		}
	}
	return funcs, nil
}

// CodeSizes returns the size in bytes of each function body of a code
// section, in order.
func CodeSizes(body []byte) ([]int, error) {
	r := &reader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	sizes := make([]int, 0, n)
	for i := 0; i < n; i++ {
		fn, err := r.vec()
		if err != nil {
			return nil, fmt.Errorf("function body %d: %w", i, err)
		}
		sizes = append(sizes, len(fn))
	}
	return sizes, nil
}

// FunctionNames reads the function names of a "name" custom section, by
// function index (imports first).
func FunctionNames(body []byte) (map[int]string, error) {
	names := map[int]string{}
	r := &reader{b: body}
	for r.off < len(body) {
		id, err := r.byte()
		if err != nil {
			return nil, err
		}
		sub, err := r.vec()
		if err != nil {
			return nil, err
		}
		if id != 1 { // function names; module and local names are skipped
			continue
		}
		sr := &reader{b: sub}
		n, err := sr.u32()
		if err != nil {
			return nil, err
		}
		for i := 0; i < n; i++ {
			idx, err := sr.u32()
			if err != nil {
				return nil, err
			}
			name, err := sr.vec()
			if err != nil {
				return nil, err
			}
			names[idx] = string(name)
		}
	}
	return names, nil
}

type reader struct {
	b   []byte
	off int
}

func (r *reader) byte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, errors.New("unexpected end")
	}
	c := r.b[r.off]
	r.off++
	return c, nil
}

func (r *reader) u32() (int, error) {
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 || v > 1<<32-1 {
		return 0, fmt.Errorf("bad LEB128 at byte %d", r.off)
	}
	r.off += n
	return int(v), nil
}

// i32 reads a signed LEB128 of at most 32 bits.
func (r *reader) i32() (int32, error) {
	var v int64
	for shift := uint(0); shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			if v < -1<<31 || v > 1<<31-1 {
				return 0, fmt.Errorf("i32 out of range at byte %d", r.off)
			}
			return int32(v), nil
		}
	}
	return 0, fmt.Errorf("bad LEB128 at byte %d", r.off)
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, errors.New("unexpected end")
	}
	b := r.b[r.off : r.off+n]
	r.off += n
	return b, nil
}

// vec reads a length-prefixed byte string.
func (r *reader) vec() ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	return r.bytes(n)
}

func (r *reader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err = r.u32()
	}
	return err
}

func appendVec(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendI32(b []byte, v int32) []byte {
	x := int64(v)
	for {
		c := byte(x & 0x7f)
		x >>= 7
		if (x == 0 && c&0x40 == 0) || (x == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
