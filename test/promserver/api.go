package promserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Series is one series of a range query's answer.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is one value of a series at a time.
type Point struct {
	T time.Time
	V float64
}

// Alert is one active alert: pending until its `for` has passed, then
// firing.
type Alert struct {
	Labels   map[string]string
	State    string
	ActiveAt time.Time
}

// Query asks Prometheus for q now, as a user's dashboard would.
func (s *Server) Query(ctx context.Context, q string) ([]Sample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "vector" {
		return nil, fmt.Errorf("%s: a %s, not a vector", q, data.ResultType)
	}
	out := make([]Sample, 0, len(data.Result))
	for _, r := range data.Result {
		_, v, err := point(r.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

// QueryRange asks for q from start to end, one point each step.
func (s *Server) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) ([]Series, error) {
	var data matrix
	params := url.Values{"query": {q}, "start": {unix(start)}, "end": {unix(end)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	if err := s.get(ctx, "/api/v1/query_range", params, &data); err != nil {
		return nil, err
	}
	return data.series()
}

// Samples are the raw samples Prometheus stored for selector in the
// window that ends at end, per series: where a scrape was missing, a
// range query would fill the hole from its lookback, and these show it.
func (s *Server) Samples(ctx context.Context, selector string, end time.Time, window time.Duration) ([]Series, error) {
	var data matrix
	q := fmt.Sprintf("%s[%dms]", selector, window.Milliseconds())
	if err := s.get(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {unix(end)}}, &data); err != nil {
		return nil, err
	}
	if data.ResultType != "matrix" {
		return nil, fmt.Errorf("%s: a %s, not a matrix", q, data.ResultType)
	}
	return data.series()
}

// matrix is an answer of series with several points each.
type matrix struct {
	ResultType string `json:"resultType"`
	Result     []struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	} `json:"result"`
}

func (m matrix) series() ([]Series, error) {
	out := make([]Series, 0, len(m.Result))
	for _, r := range m.Result {
		series := Series{Labels: r.Metric}
		for _, p := range r.Values {
			t, v, err := point(p)
			if err != nil {
				return nil, err
			}
			series.Points = append(series.Points, Point{T: t, V: v})
		}
		out = append(out, series)
	}
	return out, nil
}

// Alerts are the alerts pending or firing now.
func (s *Server) Alerts(ctx context.Context) ([]Alert, error) {
	var data struct {
		Alerts []struct {
			Labels   map[string]string `json:"labels"`
			State    string            `json:"state"`
			ActiveAt time.Time         `json:"activeAt"`
		} `json:"alerts"`
	}
	if err := s.get(ctx, "/api/v1/alerts", nil, &data); err != nil {
		return nil, err
	}
	out := make([]Alert, 0, len(data.Alerts))
	for _, a := range data.Alerts {
		out = append(out, Alert{Labels: a.Labels, State: a.State, ActiveAt: a.ActiveAt})
	}
	return out, nil
}

// Targets are the active targets' health by their scrape URL ("up",
// "down", "unknown").
func (s *Server) Targets(ctx context.Context) (map[string]string, error) {
	var data struct {
		ActiveTargets []struct {
			ScrapeURL string `json:"scrapeUrl"`
			Health    string `json:"health"`
		} `json:"activeTargets"`
	}
	if err := s.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, t := range data.ActiveTargets {
		out[t.ScrapeURL] = t.Health
	}
	return out, nil
}

// get calls the API and decodes its data into v.
func (s *Server) get(ctx context.Context, path string, params url.Values, v any) error {
	u := s.URL + path
	if params != nil {
		u += "?" + params.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	var envelope struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		return fmt.Errorf("%s: %s: %w", path, resp.Status, err)
	}
	if envelope.Status != "success" {
		return fmt.Errorf("%s: %s", path, envelope.Error)
	}
	return json.Unmarshal(envelope.Data, v)
}

// point reads Prometheus's [unix seconds, "value"] pair.
func point(p [2]any) (time.Time, float64, error) {
	ts, ok := p[0].(float64)
	text, ok2 := p[1].(string)
	if !ok || !ok2 {
		return time.Time{}, 0, fmt.Errorf("a point %v is not [time, \"value\"]", p)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return time.Time{}, 0, err
	}
	return time.UnixMilli(int64(ts * 1000)), v, nil
}

func unix(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64) }
