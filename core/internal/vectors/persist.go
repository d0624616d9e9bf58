package vectors

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/arbormem/arbor/core/api"
	"github.com/arbormem/arbor/core/internal/binrec"
)

// The file's layout (docs/format.md): the magic and version, then two
// checksummed sections, binrec's. The header holds the model, the
// dimension and the number of vectors; the body, per file sorted by path,
// its path, its key and its vector (float32, little endian). Version 1
// checked its sections with a CRC-32C.
const (
	magic   = "ARBV"
	version = 2
)

// Save writes the vectors when they changed since they were read or
// saved, in one atomic write. A read-only store writes nothing.
func (s *Store) Save() error {
	if s == nil || s.readOnly || !s.dirty {
		return nil
	}
	if err := s.fs.WriteFile(api.VectorsFile, s.encode()); err != nil {
		return fmt.Errorf("embeddings: save %s: %w", api.VectorsFile, err)
	}
	s.dirty = false
	return nil
}

func (s *Store) encode() []byte {
	paths := make([]string, 0, len(s.items))
	for p := range s.items {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	var head []byte
	head = binrec.AppendString(head, s.model)
	head = binary.AppendUvarint(head, uint64(s.dims))
	head = binary.AppendUvarint(head, uint64(len(paths)))
	body := make([]byte, 0, len(paths)*(4*s.dims+64))
	for _, p := range paths {
		it := s.items[p]
		body = binrec.AppendString(body, p)
		body = binrec.AppendString(body, it.key)
		for _, x := range it.vec {
			body = binary.LittleEndian.AppendUint32(body, math.Float32bits(x))
		}
	}
	out := append([]byte(magic), version)
	out = binrec.AppendSection(out, head)
	return binrec.AppendSection(out, body)
}

// decode reads what encode writes; any flaw is an error, and nothing of
// the file is used then.
func decode(data []byte) (string, int, map[string]item, error) {
	if len(data) < len(magic)+1 || string(data[:len(magic)]) != magic {
		return "", 0, nil, errors.New("not a vectors file")
	}
	if v := data[len(magic)]; v != version {
		return "", 0, nil, fmt.Errorf("version %d, not %d", v, version)
	}
	r := binrec.NewReader(data[len(magic)+1:])
	head := r.Section()
	model := head.Str()
	dims := head.Size()
	n := head.Size()
	body := r.Section()
	if err := errors.Join(head.Err(), body.Err(), r.Err()); err != nil {
		return "", 0, nil, err
	}
	if dims > MaxDims || (n > 0 && dims == 0) || r.Len() != 0 {
		return "", 0, nil, binrec.ErrShort
	}
	items := make(map[string]item, min(n, body.Len()/max(4*dims, 1)+1))
	for i := 0; i < n && body.Err() == nil; i++ {
		p, key := body.Str(), body.Str()
		if body.Len() < 4*dims {
			return "", 0, nil, binrec.ErrShort
		}
		vec := make([]float32, dims)
		for j := range vec {
			vec[j] = math.Float32frombits(body.Uint32())
		}
		items[p] = item{key: key, vec: vec}
	}
	if body.Err() != nil || body.Len() != 0 || len(items) != n {
		return "", 0, nil, binrec.ErrShort
	}
	return model, dims, items, nil
}
