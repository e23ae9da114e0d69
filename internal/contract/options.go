package contract

import "slices"

// ExtMark marks what the fake adds of its own: true for what it always
// adds, an option's name for what only that option adds.
const ExtMark = "x-fake-extension"

// dropOptionsOff removes from d the operations, responses and schema
// properties marked with the name of an option that is not in on, and
// returns the names of all the options d marks. Like the reference
// (kin-openapi's document walked the same way), it walks the schemas of
// components/schemas and of the answers.
func dropOptionsOff(d *document, on []string) map[string]bool {
	f := &optionFilter{on: on, marked: map[string]bool{}, seen: map[*schema]bool{}}
	for _, s := range d.components {
		f.schema(s)
	}
	for _, item := range d.paths {
		for method, op := range item.ops {
			if f.off(op.ext) {
				delete(item.ops, method)
				continue
			}
			f.responses(op.responses)
		}
	}
	return f.marked
}

// optionFilter is the walk of dropOptionsOff: the options that are on,
// the options the document marks, and the schemas already walked (a
// schema may be reached from several places).
type optionFilter struct {
	on     []string
	marked map[string]bool
	seen   map[*schema]bool
}

// off reports whether ext marks an option that is not on, and records
// the option it marks.
func (f *optionFilter) off(ext map[string]any) bool {
	o, ok := ext[ExtMark].(string)
	if ok {
		f.marked[o] = true
	}
	return ok && !slices.Contains(f.on, o)
}

// responses drops the responses marked with an option that is off and
// walks the schemas of the others.
func (f *optionFilter) responses(rs map[string]*response) {
	for status, r := range rs {
		if f.off(r.ext) {
			delete(rs, status)
			continue
		}
		for _, mt := range r.content {
			f.schema(mt.schema)
		}
	}
}

// schema drops the properties marked with an option that is off, in s
// and in every schema below it.
func (f *optionFilter) schema(s *schema) {
	if s == nil || f.seen[s] {
		return
	}
	f.seen[s] = true
	for name, p := range s.properties {
		if f.off(p.ext) {
			delete(s.properties, name)
			if s.droppedBy == nil {
				s.droppedBy = map[string]string{}
			}
			s.droppedBy[name], _ = p.ext[ExtMark].(string)
			continue
		}
		f.schema(p)
	}
	f.schema(s.items)
	f.schema(s.additionalSchema)
	for _, sub := range s.oneOf {
		f.schema(sub)
	}
}
